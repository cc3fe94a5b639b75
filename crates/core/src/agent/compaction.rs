//! Keeping the prompt within budget. Before every model call the prompt's size (plus the
//! output reserve and a margin) is checked against `agent.token_limit` and the model's
//! window. Under it, nothing changes: the prompt grows append-only, so the provider's
//! prompt cache serves its prefix. Over it, the prompt is brought down to a low-water mark
//! well below the trigger, so a compaction (and the one new prefix it makes) buys many
//! steps. The cheap steps come first, each in one batch, without a model call, each only
//! as far as the mark: tool results older than the last K become one-line stubs, then
//! oversized results are trimmed to their first and last lines (the latest step's last),
//! then fewer results stay whole (never the latest). Only when those cannot bring the
//! prompt down to the mark are runs of assistant and tool messages replaced by
//! model-written summaries, the most recent steps last. A summary's figures are the whole
//! prompt before and after, as the gauge counts it. The person's messages stay verbatim
//! unless they are what fills the budget: then everything before the latest is summarized
//! in one call (a call that cannot bring the prompt under the budget is never made). The
//! history keeps every original (the inspector shows them).

mod digest;
mod summary;

use super::context::is_persons;
use super::history::Role;
use super::meter::Meter;
use super::{AgentOptions, Session, TurnContext};
use crate::tokens::TokenCounter;
use miniagent_protocol::Event;
use summary::summarize;

pub use miniagent_protocol::CompactionStrategy as Strategy;

pub(crate) use crate::config::MARGIN_TOKENS;
/// A compaction brings the prompt down to this share of the budget (the low-water mark),
/// so the steps after it have room before the next one.
const LOW_WATER_PERCENT: u64 = 50;
/// A tool result larger than this share of the budget dominates the prompt: it is trimmed
/// before anything is summarized.
const OVERSIZED_DIVISOR: u64 = 8;
/// Under the budget, a summary must win back at least this share (1/N) of the room the
/// prompt has besides the system prompt and tools.
const MIN_GAIN_DIVISOR: u64 = 4;
/// Results under this many tokens are never trimmed (their trimmed form saves little).
const OVERSIZED_MIN_TOKENS: u64 = 600;
/// Output budget of a summary call, at most; small budgets get a shorter summary.
const SUMMARY_OUTPUT_TOKENS: u64 = 2048;
/// A run taking fewer tokens than this in the prompt is not sent to be summarized: a
/// summary of it would be barely shorter, and the call costs a full round trip.
const MIN_SUMMARY_TOKENS: u64 = 256;
/// While the prompt is over the budget (it could not be sent at all), smaller runs are
/// summarized too, down to this: a chat of many short turns must still go on.
const MIN_SUMMARY_TOKENS_OVER_BUDGET: u64 = 64;
/// Summary calls one compaction makes, at most, while the prompt fits the budget: enough
/// to reach the mark when a few long replies fill it, few enough that a compaction
/// never stalls a turn for long. Over the budget, the runs between the person's messages
/// are summarized only when this many calls can bring the prompt under it; otherwise the
/// older history is summarized as one.
const MAX_SUMMARY_CALLS: usize = 3;
/// Summary calls one compaction makes, at most, while the prompt is over the budget: each
/// is chosen only when the estimate says it leads under the budget, and the estimate can
/// be wrong, so a bound stops a compaction from calling on and on.
const MAX_SUMMARY_CALLS_OVER_BUDGET: usize = 8;
/// Tokens a summary takes in the prompt, at least (its mark, framing and a few lines):
/// what summarizing a run wins back is reckoned with it, so a run of a few dozen tokens
/// is not taken for a gain.
const SUMMARY_FLOOR_TOKENS: u64 = 48;
/// Characters of one tool result or message kept in a summary request, at most.
const DIGEST_ITEM_CHARS: usize = 4000;

/// Why the prompt could not be made to fit.
#[derive(Debug)]
pub(crate) enum BudgetFailure {
    Cancelled,
    TooLarge(String),
}

/// What one compaction did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Compacted {
    /// Summaries applied.
    pub summaries: usize,
    /// Results the prompt shows trimmed that it did not before (one trimmed and then
    /// masked shows as a stub, and is not counted).
    pub trimmed: usize,
    /// Times the masking moved (older results became stubs).
    pub masked: usize,
    /// The prompt's size before the compaction, then after its last summary: where the
    /// next summary's figures start.
    prompt_from: u64,
    /// The calls whose results it trimmed.
    trimmed_calls: Vec<String>,
    /// `/compact` asked for it (`PreCompact`'s trigger `manual`; else `auto`).
    manual: bool,
    /// The `PreCompact` hooks ran (once per compaction, before its first summary).
    hooked: bool,
}

/// The budget the prompt must fit: the smaller of the token limit and the window,
/// less the output reserve and a margin.
pub(crate) fn budget(context: &TurnContext) -> u64 {
    let config = &context.options.config;
    let limit = config.agent.token_limit.min(config.model.context_window);
    limit.saturating_sub(u64::from(config.model.max_output_tokens) + MARGIN_TOKENS)
}

/// Tokens of everything a request carries besides the messages: the system prompt and
/// the tool schemas (the gauge, the inspector and the budget all use this one figure).
pub(crate) fn fixed_tokens_of(options: &AgentOptions, counter: &TokenCounter) -> u64 {
    counter.count(&options.system_prompt) + counter.tools(&options.tools.specs())
}

/// Where the context stands, for the gauge: the whole next prompt as counted here (the
/// figure the budget, `/history` and `/stats` use too), with the provider's figures for
/// the last call. `estimated` says the provider reported none.
pub(crate) fn usage_event(session: &mut Session, options: &AgentOptions, meter: Meter) -> Event {
    let fixed = fixed_tokens_for(session, options);
    let usage = session.last_usage;
    Event::TokenUsage {
        context_tokens: fixed.saturating_add(session.context.prompt_tokens()),
        estimated: session.last_usage_estimated || usage.input_tokens + usage.output_tokens == 0,
        token_limit: options.config.agent.token_limit,
        context_window: options.config.model.context_window,
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        total_input_tokens: meter.input,
        total_output_tokens: meter.output,
        cache_read_tokens: usage.cache_read_tokens,
        cache_write_tokens: usage.cache_write_tokens,
        total_cache_read_tokens: meter.cache_read,
        total_cache_write_tokens: meter.cache_write,
        cost_usd: meter.cost.map(super::meter::in_nanodollars),
    }
}

/// [`fixed_tokens_of`], counted again only when the tools change (every step asks: the
/// budget before each call and the gauge after it).
fn fixed_tokens(session: &mut Session, context: &TurnContext) -> u64 {
    fixed_tokens_for(session, &context.options)
}

fn fixed_tokens_for(session: &mut Session, options: &AgentOptions) -> u64 {
    let names = options.tools.names();
    if let Some((counted_for, tokens)) = &session.fixed_tokens
        && *counted_for == names
    {
        return *tokens;
    }
    let tokens = fixed_tokens_of(options, &session.context.counter());
    session.fixed_tokens = Some((names, tokens));
    tokens
}

/// The whole prompt's estimated size.
pub(crate) fn prompt_size(session: &mut Session, context: &TurnContext) -> u64 {
    fixed_tokens(session, context).saturating_add(session.context.prompt_tokens())
}

/// Makes the next prompt fit the budget (pre-flight): when it is over, brings it down to
/// the low-water mark. `force` (`/compact`) compacts whatever can be even when it fits,
/// keeping the recent steps verbatim unless they are what is too large.
pub(crate) async fn ensure_budget(
    session: &mut Session,
    context: &TurnContext,
    force: bool,
) -> Result<Compacted, BudgetFailure> {
    compact(session, context, force, true).await
}

/// [`ensure_budget`]; `notices` says whether what masking and trimming did is told in
/// notices of their own (`/compact` tells it in its one report instead).
pub(crate) async fn compact(
    session: &mut Session,
    context: &TurnContext,
    force: bool,
    notices: bool,
) -> Result<Compacted, BudgetFailure> {
    // A summary's figures are the prompt as sent, as the gauge counts it: the first
    // starts from the prompt before the compaction (its masking and trimming included).
    let mut done = Compacted {
        prompt_from: prompt_size(session, context),
        // Only `/compact` tells what it did in a report of its own.
        manual: !notices,
        ..Compacted::default()
    };
    let result = bring_down(session, context, force, &mut done).await;
    // A result trimmed and then masked too shows as a stub: what is told is what the
    // prompt shows, as `/stats` and the inspector count it.
    done.trimmed = session.context.shown_trimmed_of(&done.trimmed_calls);
    if notices {
        if done.masked > 0 {
            report_masking(session, context);
        }
        if done.trimmed > 0 {
            context.events.emit(Event::Notice {
                message: trimmed_notice(done.trimmed),
            });
        }
    }
    result.map(|()| done)
}

/// The compaction's steps, cheapest first, each as far as the mark and no further.
async fn bring_down(
    session: &mut Session,
    context: &TurnContext,
    force: bool,
    done: &mut Compacted,
) -> Result<(), BudgetFailure> {
    let options = &context.options;
    let strategy = options.config.agent.compaction;
    let keep_results = options.config.agent.keep_tool_results;
    // `mask-tool-results` keeps only the last K results whole at every step (in batches);
    // the others mask only when the prompt is over budget, so its prefix, which the
    // provider caches, changes only then.
    if strategy == Strategy::MaskToolResults && session.context.advance_masking(keep_results) {
        done.masked += 1;
    }
    let budget = budget(context);
    let mut size = prompt_size(session, context);
    if size <= budget && !force {
        return Ok(());
    }
    // The system prompt and tools cannot be compacted: the mark is set in what is left.
    let fixed = fixed_tokens(session, context);
    let low_water = fixed + budget.saturating_sub(fixed) * LOW_WATER_PERCENT / 100;
    let keep = options.config.agent.keep_recent_steps;
    // `/compact` goes as far as it can without the recent steps (unless they are what is
    // too large); the pre-flight stops at the low-water mark.
    let (target, floor) = if force && size <= low_water {
        (0, keep)
    } else {
        (low_water, keep.min(1))
    };
    // The cheap steps first, without a model call, each in one batch down to the mark:
    // older results beyond the last K become stubs; then what dominates is trimmed to its
    // first and last lines (older steps first, the latest last: a trimmed result keeps
    // more than a stub, and a result too large for the room left is trimmed anyway);
    // then fewer results stay whole (never the latest).
    if strategy.masks() {
        let keeps: Vec<usize> = [keep_results].into_iter().filter(|k| *k > 0).collect();
        size = mask_down_to(session, context, done, size, target, &keeps);
    }
    if strategy != Strategy::Off {
        for keep_recent in [keep, keep.min(1), 0] {
            size = trim_oversized(session, context, done, size, target, keep_recent, budget);
        }
    }
    if strategy.masks() {
        let keeps: Vec<usize> = [keep_results / 2, 1].into_iter().filter(|k| *k > 0).collect();
        size = mask_down_to(session, context, done, size, target, &keeps);
    }
    // A model-written summary only when the cheap steps could not reach the mark (or
    // `/compact` asks for one), in the same compaction: stubs that buy a step or two
    // would change the cached prefix again at once. Then as far as the mark.
    if strategy.summarizes() && size > target {
        size = summarize_down(session, context, done, size, (target, floor), force).await?;
    }
    if strategy.masks() || strategy.summarizes() {
        size = mask_down_to(session, context, done, size, budget, &[keep_results, 1, 0]);
    }
    if size <= budget {
        return Ok(());
    }
    let why = if strategy == Strategy::Off {
        "compaction is off (agent.compaction)".to_string()
    } else {
        format!(
            "compaction cannot make room for it: {}",
            what_fills(session, context)
        )
    };
    Err(BudgetFailure::TooLarge(format!(
        "the prompt needs about {size} tokens but the budget is {budget} (agent.token_limit {}, window {}, output reserve {}); {why}",
        options.config.agent.token_limit,
        options.config.model.context_window,
        options.config.model.max_output_tokens,
    )))
}

/// What takes the room that compaction cannot win back: the system prompt and tools,
/// the person's latest message (never summarized) and their earlier ones still verbatim.
fn what_fills(session: &mut Session, context: &TurnContext) -> String {
    let fixed = fixed_tokens(session, context);
    let counter = session.context.counter();
    let mine: Vec<u64> = session
        .context
        .prompt()
        .iter()
        .filter(|m| is_persons(m))
        .map(|m| counter.message(m))
        .collect();
    let latest = mine.last().copied().unwrap_or(0);
    let earlier: u64 = mine.iter().rev().skip(1).sum();
    let mut parts =
        format!("the system prompt and tools take about {fixed} tokens, your latest message about {latest}");
    if earlier > 0 {
        parts.push_str(&format!(", your earlier messages about {earlier}"));
    }
    parts
}

/// Masks all but the first of `keeps` (then the next) results until the prompt is at
/// `target`; returns its size after. Callers leave 0 out unless the latest results may
/// go too.
fn mask_down_to(
    session: &mut Session,
    context: &TurnContext,
    done: &mut Compacted,
    mut size: u64,
    target: u64,
    keeps: &[usize],
) -> u64 {
    let mut last = None;
    for keep_whole in keeps.iter().copied() {
        if size <= target {
            break;
        }
        if last == Some(keep_whole) {
            continue;
        }
        last = Some(keep_whole);
        if session.context.mask_all_but(keep_whole) {
            done.masked += 1;
            size = prompt_size(session, context);
        }
    }
    size
}

/// Summaries down toward the mark `target`, keeping as many of the `keep` recent steps
/// (at least `floor`) as still lets the first reach it; returns the prompt's size after.
/// Over the budget (the prompt could not be sent at all), [`summarize_over_budget`]
/// first. Under it, a call only for a run worth its round trip, and a few at most: the
/// next compaction goes on from there.
async fn summarize_down(
    session: &mut Session,
    context: &TurnContext,
    done: &mut Compacted,
    mut size: u64,
    (target, floor): (u64, usize),
    force: bool,
) -> Result<u64, BudgetFailure> {
    let budget = budget(context);
    let keep = context.options.config.agent.keep_recent_steps;
    let output = summary_output_tokens(budget);
    let (keep_recent, mut calls) = if size > budget {
        let calls;
        (size, calls) = summarize_over_budget(session, context, done, size, target, (keep, floor)).await?;
        if size > budget || calls == 0 {
            return Ok(size);
        }
        (floor, calls)
    } else {
        let mut chosen = None;
        for keep_steps in (floor..=keep.max(floor)).rev() {
            if let Some((range, gain)) = best_run(session, keep_steps, output, MIN_SUMMARY_TOKENS) {
                chosen = Some((range, keep_steps, gain));
                if size.saturating_sub(gain) <= target {
                    break;
                }
            }
        }
        let Some(((start, end), keep_recent, gain)) = chosen else {
            return Ok(size);
        };
        // Under the budget (the cheap steps got it there, not to the mark), a summary call
        // must buy several steps: when the latest step alone keeps the prompt over the
        // mark, summarizing a little more at every step would cost a call each time.
        let room = budget.saturating_sub(fixed_tokens(session, context));
        if !(force || gain >= room / MIN_GAIN_DIVISOR) {
            return Ok(size);
        }
        summarize(session, context, start, end, target, done).await?;
        size = prompt_size(session, context);
        (keep_recent, 1)
    };
    // On to the mark, the next run that wins back the most each time: a compaction that
    // stopped just under the budget would come back at the next step, a summary call (and
    // a changed cached prefix) at every step.
    while size > target && calls < MAX_SUMMARY_CALLS {
        let Some(((start, end), _)) = best_run(session, keep_recent, output, MIN_SUMMARY_TOKENS) else {
            break;
        };
        calls += 1;
        match summarize_from(session, context, (start, end), target, done, size).await? {
            Some(after) => size = after,
            None => break,
        }
    }
    Ok(size)
}

/// Summarizes `start..end`; returns the prompt's size after, or `None` when it did not
/// come down from `size` (nothing shorter could be written).
async fn summarize_from(
    session: &mut Session,
    context: &TurnContext,
    (start, end): (usize, usize),
    target: u64,
    done: &mut Compacted,
    size: u64,
) -> Result<Option<u64>, BudgetFailure> {
    summarize(session, context, start, end, target, done).await?;
    let after = prompt_size(session, context);
    Ok((after < size).then_some(after))
}

/// Over the budget: summary calls only while the estimate says they bring the prompt
/// under it (a call that cannot is never made: the person's own messages may be what
/// fills it), each chosen by [`over_budget_choice`]. Returns the prompt's size after and
/// the calls made.
async fn summarize_over_budget(
    session: &mut Session,
    context: &TurnContext,
    done: &mut Compacted,
    mut size: u64,
    target: u64,
    (keep, floor): (usize, usize),
) -> Result<(u64, usize), BudgetFailure> {
    let budget = budget(context);
    let output = summary_output_tokens(budget);
    let mut calls = 0;
    // On to the mark, not just under the budget: a compaction that stops just under it
    // comes back at the next turn, a summary call (and a new cached prefix) every turn.
    while size > target && calls < MAX_SUMMARY_CALLS_OVER_BUDGET {
        if size <= budget && calls >= MAX_SUMMARY_CALLS {
            break;
        }
        let excess = (size - target, size.saturating_sub(budget));
        // One run that reaches the mark, keeping as many recent steps verbatim as it
        // can; else what leads to the mark (or at least under the budget), keeping the
        // fewest (the most is won back with each call).
        let Some((start, end)) = (floor..=keep.max(floor))
            .rev()
            .find_map(|keep_steps| {
                best_run(session, keep_steps, output, MIN_SUMMARY_TOKENS_OVER_BUDGET)
                    .filter(|(_, gain)| size.saturating_sub(*gain) <= target)
                    .map(|(range, _)| range)
            })
            .or_else(|| over_budget_choice(session, excess, floor, output))
        else {
            break;
        };
        calls += 1;
        match summarize_from(session, context, (start, end), target, done, size).await? {
            Some(after) => size = after,
            None => break,
        }
    }
    Ok((size, calls))
}

/// What to summarize next, keeping `keep_recent` steps, to win back `to_mark` tokens (to
/// the low-water mark) or at least `to_budget` (under the budget): the run between two of
/// the person's messages that wins back the most, when at most [`MAX_SUMMARY_CALLS`] such
/// runs reach the mark; otherwise everything before the person's latest message in one
/// call (their earlier messages kept verbatim in it when they are short, summarized when
/// they are what fills the budget), when that reaches the mark, or the budget at best;
/// else runs, when enough of them reach the budget. `None`: nothing a summary could do
/// makes room, so no call is made.
fn over_budget_choice(
    session: &mut Session,
    (to_mark, to_budget): (u64, u64),
    keep_recent: usize,
    output: u64,
) -> Option<(usize, usize)> {
    let mut runs = runs_by_gain(session, keep_recent, output, MIN_SUMMARY_TOKENS_OVER_BUDGET);
    runs.sort_by_key(|(_, gain)| std::cmp::Reverse(*gain));
    let calls_to = |excess: u64| {
        let mut won = 0u64;
        runs.iter()
            .position(|(_, gain)| {
                won = won.saturating_add(*gain);
                won >= excess
            })
            .map(|index| index + 1)
    };
    let (runs_to_mark, runs_to_budget) = (calls_to(to_mark), calls_to(to_budget));
    let best = runs.first().map(|(range, _)| *range);
    if runs_to_mark.is_some_and(|calls| calls <= MAX_SUMMARY_CALLS) {
        return best;
    }
    if let Some((older, likely, at_best)) = older_history_gain(session, output) {
        // The runs of the current turn stay candidates after the older history is one.
        let this_turn: u64 = runs
            .iter()
            .filter(|((start, _), _)| *start > older.1)
            .map(|(_, gain)| *gain)
            .sum();
        if likely.saturating_add(this_turn) >= to_mark
            || (to_budget > 0 && at_best.saturating_add(this_turn) >= to_budget)
        {
            return Some(older);
        }
    }
    if to_budget == 0 {
        return None;
    }
    runs_to_budget.and(best)
}

/// Everything before the person's latest message, as one range, with what summarizing it
/// would likely win back and at best: its summary is reckoned at a third of it (at most
/// the `output` budget) plus the earlier messages it keeps word for word, at best
/// [`SUMMARY_FLOOR_TOKENS`] (those messages give way when the prompt could not fit). `None` when there is nothing before it, or it is one summary
/// already.
fn older_history_gain(session: &mut Session, output: u64) -> Option<((usize, usize), u64, u64)> {
    let last_user = session
        .context
        .messages()
        .iter()
        .rposition(is_persons)
        .filter(|last_user| *last_user > 0)?;
    if session
        .context
        .summaries()
        .iter()
        .any(|s| s.start == 0 && s.end == last_user)
    {
        return None;
    }
    let shown = session.context.range_tokens(0, last_user);
    let kept = summary::verbatim_tokens(session, 0, last_user, budget_share(output));
    let likely = shown.saturating_sub(output.min(shown / 3).max(SUMMARY_FLOOR_TOKENS) + kept);
    // The messages kept word for word give way when the prompt could not fit with them.
    let at_best = shown.saturating_sub(SUMMARY_FLOOR_TOKENS);
    Some(((0, last_user), likely, at_best))
}

/// The person's messages a summary keeps verbatim take at most twice the summary's own
/// `output` budget (a quarter of a small budget, 4096 tokens at most): longer, they are
/// summarized with the rest.
fn budget_share(output: u64) -> u64 {
    output * 2
}

/// What a summary of a run taking `shown` tokens in the prompt wins back: a summary is
/// reckoned at a third of what it replaces, at least [`SUMMARY_FLOOR_TOKENS`], at most its
/// `output` budget.
fn summary_gain(shown: u64, output: u64) -> u64 {
    shown.saturating_sub(output.min(shown / 3).max(SUMMARY_FLOOR_TOKENS))
}

/// The runs (of [`plan`], keeping `keep_recent` steps) of at least `smallest` tokens whose
/// summary would win something back, with what it would.
fn runs_by_gain(
    session: &mut Session,
    keep_recent: usize,
    output: u64,
    smallest: u64,
) -> Vec<((usize, usize), u64)> {
    plan(session, keep_recent)
        .into_iter()
        .filter_map(|(start, end)| {
            let shown = session.context.range_tokens(start, end);
            let gain = summary_gain(shown, output);
            (shown >= smallest && gain > 0).then_some(((start, end), gain))
        })
        .collect()
}

/// The run (of [`plan`], keeping `keep_recent` steps) whose summary wins back the most,
/// with what it wins back. Runs under `smallest` tokens are not candidates.
fn best_run(
    session: &mut Session,
    keep_recent: usize,
    output: u64,
    smallest: u64,
) -> Option<((usize, usize), u64)> {
    runs_by_gain(session, keep_recent, output, smallest)
        .into_iter()
        .max_by_key(|(_, gain)| *gain)
}

/// The notice for `trimmed` results trimmed.
fn trimmed_notice(trimmed: usize) -> String {
    format!(
        "{} large tool result{} trimmed to {} first and last lines to save context (the history keeps {} whole)",
        trimmed,
        if trimmed == 1 { " is" } else { "s are" },
        if trimmed == 1 { "its" } else { "their" },
        if trimmed == 1 { "it" } else { "them" },
    )
}

/// The output budget of a summary call: short enough to leave the low-water mark
/// reachable, within reason.
fn summary_output_tokens(budget: u64) -> u64 {
    (budget / 8).clamp(256, SUMMARY_OUTPUT_TOKENS)
}

/// Trims oversized results, oldest first, until the prompt is at `target`; results in the
/// last `keep_recent` steps are left whole. Returns the prompt's size after.
fn trim_oversized(
    session: &mut Session,
    context: &TurnContext,
    done: &mut Compacted,
    mut size: u64,
    target: u64,
    keep_recent: usize,
    budget: u64,
) -> u64 {
    let min_tokens = (budget / OVERSIZED_DIVISOR).max(OVERSIZED_MIN_TOKENS);
    let recent_from = recent_steps_start(session, keep_recent);
    for (id, index, _) in session.context.oversized_results(min_tokens) {
        if size <= target {
            break;
        }
        if index >= recent_from {
            continue;
        }
        session.context.trim_result(&id);
        done.trimmed_calls.push(id);
        size = prompt_size(session, context);
    }
    size
}

/// Where the last `keep_recent` steps (assistant messages and what follows them) begin;
/// the history's end when none are kept.
fn recent_steps_start(session: &Session, keep_recent: usize) -> usize {
    let messages = session.context.messages();
    if keep_recent == 0 {
        return messages.len();
    }
    let last_user = messages.iter().rposition(|m| m.role == Role::User).unwrap_or(0);
    let assistants: Vec<usize> = (last_user..messages.len())
        .filter(|i| messages[*i].role == Role::Assistant)
        .collect();
    assistants
        .len()
        .checked_sub(keep_recent)
        .map_or(last_user, |first| assistants[first])
}

/// Tells the stubs the prompt shows now (a summary may have taken some in since they
/// were masked; when it took them all, there is nothing to tell).
fn report_masking(session: &Session, context: &TurnContext) {
    let masked = session.context.shown_masked_results();
    if masked == 0 {
        return;
    }
    context.events.emit(Event::Notice {
        message: masking_notice(
            masked,
            session.context.shown_results().saturating_sub(masked),
            session.context.shown_trimmed_results(),
        ),
    });
}

/// The notice for `masked` results shown as stubs, with `shown` results after them, of
/// which `trimmed` are shown trimmed.
fn masking_notice(masked: usize, shown: usize, trimmed: usize) -> String {
    let stubs = if masked == 1 {
        "1 older tool result is shown to the model as a one-line stub".to_string()
    } else {
        format!("{masked} older tool results are shown to the model as one-line stubs")
    };
    let rest = match (shown, trimmed) {
        (0, _) => "(none stays whole)".to_string(),
        (1, 0) => "(the last one stays whole)".to_string(),
        (1, _) => "(the last one is shown trimmed)".to_string(),
        (n, 0) => format!("(the last {n} stay whole)"),
        (n, t) if t >= n => format!("(the last {n} are shown trimmed)"),
        (n, t) => format!("(the last {n} stay, {t} of them trimmed)"),
    };
    format!("{stubs} {rest}")
}

/// Ranges worth summarizing, oldest first: each run of assistant and tool messages
/// between two user messages; in the last run, all but its last `keep_recent` steps.
pub(crate) fn plan(session: &Session, keep_recent: usize) -> Vec<(usize, usize)> {
    let messages = session.context.messages();
    let users: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User)
        .map(|(i, _)| i)
        .collect();
    let mut ranges = Vec::new();
    for (n, user) in users.iter().enumerate() {
        let start = user + 1;
        let last = n + 1 == users.len();
        let mut end = users.get(n + 1).copied().unwrap_or(messages.len());
        if last && keep_recent > 0 {
            let assistants: Vec<usize> = (start..end)
                .filter(|i| messages[*i].role == Role::Assistant)
                .collect();
            if assistants.len() <= keep_recent {
                continue;
            }
            end = assistants[assistants.len() - keep_recent];
        }
        if start >= end {
            continue;
        }
        let summaries = session.context.summaries();
        let already = summaries.iter().any(|s| s.start == start && s.end == end);
        let straddles = summaries
            .iter()
            .any(|s| s.start < end && s.end > start && !(s.start >= start && s.end <= end));
        if !already && !straddles {
            ranges.push((start, end));
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 26 point 18: one result is "1 older tool result", not "1 older tool results";
    /// results shown trimmed are not said to stay whole.
    #[test]
    fn the_masking_notice_counts_in_the_singular_and_names_trimmed_results() {
        let cases = [
            (
                (1, 1, 0),
                "1 older tool result is shown to the model as a one-line stub (the last one stays whole)",
            ),
            (
                (1, 1, 1),
                "1 older tool result is shown to the model as a one-line stub (the last one is shown trimmed)",
            ),
            (
                (3, 5, 0),
                "3 older tool results are shown to the model as one-line stubs (the last 5 stay whole)",
            ),
            (
                (3, 5, 2),
                "3 older tool results are shown to the model as one-line stubs (the last 5 stay, 2 of them trimmed)",
            ),
            (
                (2, 2, 2),
                "2 older tool results are shown to the model as one-line stubs (the last 2 are shown trimmed)",
            ),
            (
                (4, 0, 0),
                "4 older tool results are shown to the model as one-line stubs (none stays whole)",
            ),
        ];
        for ((masked, shown, trimmed), expected) in cases {
            assert_eq!(masking_notice(masked, shown, trimmed), expected);
        }
    }
}
