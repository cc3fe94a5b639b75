//! What the session's model calls have used and cost: every call it makes (steps,
//! summaries, sub-agents) is added here as it completes, at the prices configured for the
//! model. The turn's cost is what was added since it began.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::config::{BilledTokens, ModelPrice};
use crate::llm::Usage;
use miniagent_protocol::Event;

/// More tokens than a session's log can truthfully record.
const MAX_SESSION_TOKENS: u64 = 1_000_000_000_000;

/// Provider-reported token counts over the session, and their cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Meter {
    /// Model calls that completed.
    pub calls: u64,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// US dollars; `None` while no call had a known price.
    pub cost: Option<f64>,
}

impl Meter {
    /// Adds one call; returns what it cost, when the price is known.
    pub fn add(&mut self, usage: Usage, price: Option<ModelPrice>) -> Option<f64> {
        self.calls = self.calls.saturating_add(1);
        self.input = self.input.saturating_add(usage.input_tokens);
        self.output = self.output.saturating_add(usage.output_tokens);
        self.cache_read = self.cache_read.saturating_add(usage.cache_read_tokens);
        self.cache_write = self.cache_write.saturating_add(usage.cache_write_tokens);
        let cost = price.map(|price| price.cost(billed(usage)))?;
        self.cost = Some(self.cost.unwrap_or(0.0) + cost);
        Some(cost)
    }

    /// The totals a recorded [`Event::TokenUsage`] carries (a resumed session goes on
    /// from them).
    pub fn recorded(event: &Event) -> Option<Meter> {
        match event {
            Event::TokenUsage {
                total_input_tokens,
                total_output_tokens,
                total_cache_read_tokens,
                total_cache_write_tokens,
                cost_usd,
                ..
            } => {
                // A damaged or hostile log cannot make the figures absurd: no session
                // reaches a trillion tokens (nor a million dollars: `sane_cost`).
                let sane = |count: u64| if count > MAX_SESSION_TOKENS { 0 } else { count };
                Some(Meter {
                    calls: 0,
                    input: sane(*total_input_tokens),
                    output: sane(*total_output_tokens),
                    cache_read: sane(*total_cache_read_tokens),
                    cache_write: sane(*total_cache_write_tokens),
                    cost: miniagent_protocol::sane_cost(*cost_usd),
                })
            }
            _ => None,
        }
    }
}

impl Meter {
    /// What was used since `before` (a turn's figures), as the event that reports it.
    pub fn since(&self, before: &Meter) -> Event {
        Event::TurnUsage {
            model_calls: self.calls.saturating_sub(before.calls),
            input_tokens: self.input.saturating_sub(before.input),
            output_tokens: self.output.saturating_sub(before.output),
            cache_read_tokens: self.cache_read.saturating_sub(before.cache_read),
            cache_write_tokens: self.cache_write.saturating_sub(before.cache_write),
            cost_usd: self
                .cost
                .map(|cost| in_nanodollars((cost - before.cost.unwrap_or(0.0)).max(0.0))),
        }
    }
}

/// A cost as events carry it: to the billionth of a dollar, so a sum of prices reads
/// `0.0048575`, not `0.004857500000000001`.
pub(crate) fn in_nanodollars(cost: f64) -> f64 {
    (cost * 1e9).round() / 1e9
}

/// A call's counts as a bill reads them.
pub(crate) fn billed(usage: Usage) -> BilledTokens {
    BilledTokens {
        input: usage.input_tokens,
        output: usage.output_tokens,
        cache_read: usage.cache_read_tokens,
        cache_write: usage.cache_write_tokens,
    }
}

/// The meter every turn of a session, and its sub-agents, add to.
#[derive(Clone, Debug, Default)]
pub(crate) struct SharedMeter(Arc<Mutex<Meter>>);

impl SharedMeter {
    fn lock(&self) -> MutexGuard<'_, Meter> {
        // Every update is one assignment of plain numbers: a poisoned lock holds a
        // consistent meter.
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn add(&self, usage: Usage, price: Option<ModelPrice>) -> Option<f64> {
        self.lock().add(usage, price)
    }

    pub fn get(&self) -> Meter {
        *self.lock()
    }

    pub fn set(&self, meter: Meter) {
        *self.lock() = meter;
    }
}

/// Output tokens a step is reckoned to write when the last call wrote fewer.
const MIN_OUTPUT_ESTIMATE: u64 = 500;

/// What the next call is reckoned to cost: a prompt of `prompt_tokens`, of which what the
/// last call read from or wrote to the cache is read (when caching is on), the rest
/// written to it where the price has a write rate (Anthropic) or plain input; the output
/// as long as the last call's, at least [`MIN_OUTPUT_ESTIMATE`].
pub(crate) fn next_call_estimate(price: ModelPrice, prompt_tokens: u64, last: Usage, caching: bool) -> f64 {
    let mut usage = estimated_prompt(prompt_tokens, last, caching, price.cache_write.is_some());
    usage.output_tokens = last.output_tokens.max(MIN_OUTPUT_ESTIMATE);
    price.cost(billed(usage))
}

/// A prompt of `prompt_tokens` as the provider is reckoned to bill it: what the last
/// call of the conversation read from or wrote to the cache is read from it (when caching
/// is on), the rest written to it where the provider writes (`cache_writes`, Anthropic)
/// or plain input.
fn estimated_prompt(prompt_tokens: u64, last: Usage, caching: bool, cache_writes: bool) -> Usage {
    let cached = if caching {
        last.cache_read_tokens
            .saturating_add(last.cache_write_tokens)
            .min(prompt_tokens)
    } else {
        0
    };
    Usage {
        input_tokens: prompt_tokens,
        output_tokens: 0,
        cache_read_tokens: cached,
        cache_write_tokens: if caching && cache_writes {
            prompt_tokens - cached
        } else {
            0
        },
    }
}

/// What a call that ended before its reply was complete (interrupted, broken off,
/// dropped for repeating itself), or completed without the provider saying what its
/// prompt was, is reckoned to have used, for the meter: providers bill such calls too. What the provider reported of it (Anthropic says the prompt's count
/// when the reply starts) is taken as it is, with at least `streamed_output` tokens
/// out; a provider that reports only at the end (OpenAI) is reckoned from our count of
/// the prompt, cached as the conversation's last call was. `None` when the provider
/// neither reported nor streamed anything: the call may not have reached the model.
pub(crate) fn unfinished_usage(
    reported: Option<Usage>,
    any_output: bool,
    prompt_tokens: impl FnOnce() -> u64,
    streamed_output: u64,
    last: Usage,
    caching: bool,
    cache_writes: bool,
) -> Option<Usage> {
    let reported_output = reported.map_or(0, |usage| usage.output_tokens);
    let mut usage = match reported {
        Some(usage) if usage.input_tokens > 0 => usage,
        _ if any_output => estimated_prompt(prompt_tokens(), last, caching, cache_writes),
        _ => return None,
    };
    usage.output_tokens = usage.output_tokens.max(reported_output).max(streamed_output);
    Some(usage)
}

/// The turn's cost limit: `agent.max_cost`, and the meter's figure when the turn began.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CostLimit {
    pub limit: f64,
    pub price: ModelPrice,
    pub at_start: f64,
}

impl CostLimit {
    /// The limit for a turn starting now, when one is set and the model's price known.
    pub fn for_turn(config: &crate::config::Config, meter: &SharedMeter) -> Option<CostLimit> {
        let limit = config.agent.max_cost;
        let price = config.price()?;
        (limit > 0.0).then(|| CostLimit {
            limit,
            price,
            at_start: meter.get().cost.unwrap_or(0.0),
        })
    }

    /// What the turn has cost so far.
    pub fn spent(&self, meter: &SharedMeter) -> f64 {
        (meter.get().cost.unwrap_or(0.0) - self.at_start).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SONNET: ModelPrice = ModelPrice {
        input: 3.0,
        output: 15.0,
        cache_write: Some(3.75),
        cache_read: Some(0.3),
    };

    #[test]
    fn a_call_costs_each_part_at_its_rate() {
        let mut meter = Meter::default();
        let usage = Usage {
            input_tokens: 100_000,
            output_tokens: 2_000,
            cache_read_tokens: 80_000,
            cache_write_tokens: 15_000,
        };
        let cost = meter.add(usage, Some(SONNET)).unwrap();
        // 5k plain at $3, 80k read at $0.30, 15k written at $3.75, 2k out at $15 (per M).
        let expected = 0.015 + 0.024 + 0.05625 + 0.03;
        assert!((cost - expected).abs() < 1e-12, "{cost} != {expected}");
        assert_eq!(meter.cost, Some(cost));
        assert_eq!(
            (meter.input, meter.output, meter.cache_read, meter.cache_write),
            (100_000, 2_000, 80_000, 15_000)
        );
        // Unpriced calls count tokens but no cost.
        let mut unpriced = Meter::default();
        assert_eq!(unpriced.add(usage, None), None);
        assert_eq!(unpriced.cost, None);
    }

    #[test]
    fn the_estimate_reads_what_the_last_call_cached_and_writes_the_rest() {
        let last = Usage {
            input_tokens: 10_000,
            output_tokens: 100,
            cache_read_tokens: 8_000,
            cache_write_tokens: 2_000,
        };
        let cached = next_call_estimate(SONNET, 12_000, last, true);
        let expected = (10_000.0 * 0.3 + 2_000.0 * 3.75 + 500.0 * 15.0) / 1e6;
        assert!((cached - expected).abs() < 1e-12);
        let uncached = next_call_estimate(SONNET, 12_000, last, false);
        assert!((uncached - (12_000.0 * 3.0 + 500.0 * 15.0) / 1e6).abs() < 1e-12);
    }

    #[test]
    fn an_unfinished_call_counts_what_the_provider_reported_or_is_reckoned() {
        let last = Usage {
            input_tokens: 10_000,
            output_tokens: 100,
            cache_read_tokens: 9_000,
            cache_write_tokens: 0,
        };
        let never = || -> u64 { panic!("the prompt is not counted when the provider reported it") };
        // Anthropic reported the prompt when the reply started; the output so far is ours.
        let reported = Usage {
            input_tokens: 12_000,
            output_tokens: 1,
            cache_read_tokens: 10_000,
            cache_write_tokens: 2_000,
        };
        assert_eq!(
            unfinished_usage(Some(reported), true, never, 40, last, true, true),
            Some(Usage {
                output_tokens: 40,
                ..reported
            })
        );
        // OpenAI reports at the end only: our count, cached as the last call was.
        assert_eq!(
            unfinished_usage(None, true, || 12_000, 40, last, true, false),
            Some(Usage {
                input_tokens: 12_000,
                output_tokens: 40,
                cache_read_tokens: 9_000,
                cache_write_tokens: 0,
            })
        );
        assert_eq!(
            unfinished_usage(None, true, || 12_000, 40, last, false, false),
            Some(Usage {
                input_tokens: 12_000,
                output_tokens: 40,
                ..Usage::default()
            })
        );
        // Nothing reported and nothing streamed: the call may never have reached a model.
        assert_eq!(unfinished_usage(None, false, never, 0, last, true, false), None);
        assert_eq!(
            unfinished_usage(Some(Usage::default()), false, never, 0, last, true, false),
            None
        );
    }

    #[test]
    fn costs_in_events_carry_no_float_noise() {
        assert_eq!(
            serde_json::json!(in_nanodollars(0.004857500000000001)).to_string(),
            "0.0048575"
        );
        assert_eq!(
            serde_json::json!(in_nanodollars(2.7001500000000003)).to_string(),
            "2.70015"
        );
    }

    #[test]
    fn a_recorded_cost_that_makes_no_sense_is_dropped() {
        let event = |cost| Event::TokenUsage {
            context_tokens: 0,
            estimated: false,
            token_limit: 0,
            context_window: 0,
            input_tokens: 0,
            output_tokens: 0,
            total_input_tokens: 7,
            total_output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            total_cache_read_tokens: 0,
            total_cache_write_tokens: 0,
            cost_usd: Some(cost),
        };
        assert_eq!(Meter::recorded(&event(f64::NAN)).unwrap().cost, None);
        assert_eq!(Meter::recorded(&event(-1.0)).unwrap().cost, None);
        assert_eq!(Meter::recorded(&event(0.25)).unwrap().cost, Some(0.25));
    }
}
