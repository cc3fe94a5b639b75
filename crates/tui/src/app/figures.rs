//! The figures: what the session's prompt weighs against its budget, what it has used
//! and cost, and the counters `/stats` shows. Agent events add to them; a cleared or
//! fresh session starts them over, keeping the budget.

use std::collections::BTreeMap;

use miniagent_protocol::Event;

/// The token-budget figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TokenFigures {
    pub context_tokens: u64,
    pub estimated: bool,
    pub token_limit: u64,
    pub context_window: u64,
    pub total_input: u64,
    pub total_output: u64,
    /// Of the input, what the provider read from and wrote to its prompt cache.
    pub total_cache_read: u64,
    pub total_cache_write: u64,
    /// What the session has cost, when the model's price is known.
    pub cost: Option<f64>,
    /// What the last turn used.
    pub last_turn: Option<TurnFigures>,
    pub compactions: u32,
    /// The latest compaction's prompt size before and after, for the gauge.
    pub last_compaction: Option<CompactionFigures>,
}

/// What one turn used.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TurnFigures {
    pub model_calls: u64,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cost: Option<f64>,
}

/// The whole prompt's tokens around one compaction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactionFigures {
    pub tokens_before: u64,
    pub tokens_after: u64,
}

/// Counters for `/stats`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub turns: u32,
    pub steps: u32,
    /// Summary calls (each announced by `compaction_started`): model calls too.
    pub summary_calls: u32,
    /// Model calls the agent made, as each turn's `TurnUsage` counts them (its steps,
    /// summaries, report and sub-agents'), plus those of `/compact` and of a turn that
    /// never reported. A step refused before its request was sent is not one.
    pub model_calls: u64,
    /// Calls announced since the last report (the running turn's steps and summaries, a
    /// `/compact`'s summaries): counted until a `TurnUsage` says how many were made.
    pub unreported_calls: u64,
    pub tool_calls: BTreeMap<String, u32>,
    pub retries: u32,
}

impl Stats {
    /// The model calls made so far, the running turn's as announced.
    pub fn calls(&self) -> u64 {
        self.model_calls.saturating_add(self.unreported_calls)
    }
}

/// The session's figures: tokens and counters.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    tokens: TokenFigures,
    stats: Stats,
}

impl Figures {
    pub fn tokens(&self) -> &TokenFigures {
        &self.tokens
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// For a test that draws a figure the events never give (no known price).
    #[cfg(test)]
    pub(crate) fn tokens_mut(&mut self) -> &mut TokenFigures {
        &mut self.tokens
    }

    /// The prompt's budget: where compaction starts and the model's window.
    pub(crate) fn set_budget(&mut self, token_limit: u64, context_window: u64) {
        self.tokens.token_limit = token_limit;
        self.tokens.context_window = context_window;
    }

    /// The conversation was cleared: the prompt's figures start over, the budget and
    /// the session's counters stay.
    pub(crate) fn history_cleared(&mut self) {
        self.tokens = self.budget_only();
    }

    /// A fresh session view: everything starts over but the budget.
    pub(crate) fn start_over(&mut self) {
        self.tokens = self.budget_only();
        self.stats = Stats::default();
    }

    fn budget_only(&self) -> TokenFigures {
        TokenFigures {
            token_limit: self.tokens.token_limit,
            context_window: self.tokens.context_window,
            ..TokenFigures::default()
        }
    }

    /// A turn started; returns its number in the session.
    pub(crate) fn turn_started(&mut self) -> u32 {
        // What came before it will not be reported: a `/compact`'s summaries, a turn
        // whose recording ends before its usage.
        self.stats.model_calls += std::mem::take(&mut self.stats.unreported_calls);
        self.stats.turns += 1;
        self.stats.turns
    }

    /// The turn's message was taken back out of the session: it was not a turn.
    pub(crate) fn turn_taken_back(&mut self) {
        self.stats.turns = self.stats.turns.saturating_sub(1);
    }

    /// A step (one model call) started; returns the session's turn it belongs to.
    pub(crate) fn step_started(&mut self) -> u32 {
        self.stats.steps += 1;
        self.stats.unreported_calls += 1;
        self.stats.turns
    }

    pub(crate) fn tool_called(&mut self, name: &str) {
        *self.stats.tool_calls.entry(name.to_string()).or_default() += 1;
    }

    pub(crate) fn retried(&mut self) {
        self.stats.retries += 1;
    }

    pub(crate) fn summary_called(&mut self) {
        self.stats.summary_calls += 1;
        self.stats.unreported_calls += 1;
    }

    /// The model reported its usage (`Event::TokenUsage`).
    pub(crate) fn token_usage(&mut self, event: Event) {
        let Event::TokenUsage {
            context_tokens,
            estimated,
            token_limit,
            context_window,
            total_input_tokens,
            total_output_tokens,
            total_cache_read_tokens,
            total_cache_write_tokens,
            cost_usd,
            ..
        } = event
        else {
            return;
        };
        self.usage(TokenFigures {
            context_tokens,
            estimated,
            token_limit,
            context_window,
            total_input: total_input_tokens,
            total_output: total_output_tokens,
            total_cache_read: total_cache_read_tokens,
            total_cache_write: total_cache_write_tokens,
            cost: cost_usd,
            ..TokenFigures::default()
        });
    }

    /// The prompt's and the session's figures; the last turn's and the compactions'
    /// come by their own events and stay.
    fn usage(&mut self, usage: TokenFigures) {
        self.tokens = TokenFigures {
            // What a recording says is shown only when it makes sense.
            cost: miniagent_protocol::sane_cost(usage.cost),
            last_turn: self.tokens.last_turn,
            compactions: self.tokens.compactions,
            last_compaction: self.tokens.last_compaction,
            ..usage
        };
    }

    /// What the turn just ended used (`Event::TurnUsage`).
    pub(crate) fn turn_usage(&mut self, event: Event) {
        let Event::TurnUsage {
            model_calls,
            input_tokens,
            output_tokens,
            cache_read_tokens,
            cost_usd,
            ..
        } = event
        else {
            return;
        };
        // The agent's count replaces the calls its events announced: a step refused
        // before sending was announced but never made; a report or a sub-agent's call
        // was made unannounced.
        self.stats.model_calls += model_calls;
        self.stats.unreported_calls = 0;
        self.tokens.last_turn = Some(TurnFigures {
            model_calls,
            input: input_tokens,
            output: output_tokens,
            cache_read: cache_read_tokens,
            cost: miniagent_protocol::sane_cost(cost_usd),
        });
    }

    /// The context was compacted: until the next model call reports, the estimate after
    /// compaction is the best figure.
    pub(crate) fn compacted(&mut self, tokens_before: u64, tokens_after: u64) {
        self.tokens.compactions += 1;
        self.tokens.last_compaction = Some(CompactionFigures {
            tokens_before,
            tokens_after,
        });
        self.tokens.context_tokens = tokens_after;
        self.tokens.estimated = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_keeps_the_turn_and_compaction_figures_and_starting_over_keeps_the_budget() {
        let mut figures = Figures::default();
        figures.set_budget(80_000, 200_000);
        figures.compacted(50_000, 9_000);
        figures.turn_usage(Event::TurnUsage {
            model_calls: 2,
            input_tokens: 10,
            output_tokens: 5,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost_usd: Some(f64::NAN),
        });
        figures.usage(TokenFigures {
            context_tokens: 12_000,
            token_limit: 80_000,
            context_window: 200_000,
            total_input: 30,
            total_output: 7,
            cost: Some(0.25),
            ..TokenFigures::default()
        });
        let turn = TurnFigures {
            model_calls: 2,
            input: 10,
            output: 5,
            cache_read: 0,
            cost: None,
        };
        let compaction = CompactionFigures {
            tokens_before: 50_000,
            tokens_after: 9_000,
        };
        assert_eq!(
            *figures.tokens(),
            TokenFigures {
                context_tokens: 12_000,
                token_limit: 80_000,
                context_window: 200_000,
                total_input: 30,
                total_output: 7,
                cost: Some(0.25),
                last_turn: Some(turn),
                compactions: 1,
                last_compaction: Some(compaction),
                ..TokenFigures::default()
            }
        );
        figures.turn_started();
        figures.tool_called("bash");
        figures.start_over();
        assert_eq!(
            (*figures.tokens(), figures.stats().clone()),
            (
                TokenFigures {
                    token_limit: 80_000,
                    context_window: 200_000,
                    ..TokenFigures::default()
                },
                Stats::default()
            )
        );
    }
}
