//! The inspector's view of the context: the prompt as the model will see it next, what
//! each summary replaced, and where the tokens go.

use std::collections::BTreeMap;

use super::context::{ContextState, SetAside, Summary, ViewItem};
use super::history::{ContentBlock, Message, Role};
use super::{AgentOptions, Session};
use miniagent_protocol::{
    CompactionRecord, ContextReport, Event, HistoryEntry, HistoryEntryKind, HistorySnapshot, SetAsideBranch,
    SummaryDetail, message_range,
};

/// Characters of one entry's body sent to the front end; longer ones are cut in the middle.
const BODY_LIMIT: usize = 20_000;

/// [`Op::InspectHistory`](miniagent_protocol::Op::InspectHistory) was asked.
pub(crate) const HISTORY: u8 = 1;
/// [`Op::InspectContext`](miniagent_protocol::Op::InspectContext) was asked.
pub(crate) const CONTEXT: u8 = 2;

/// The answers to what was `asked` ([`HISTORY`], [`CONTEXT`], or both).
pub(crate) fn answers(asked: u8, session: &mut Session, options: &AgentOptions) -> Vec<Event> {
    let mut answers = Vec::new();
    if asked & HISTORY != 0 {
        answers.push(Event::HistorySnapshot {
            snapshot: snapshot(session, options),
        });
    }
    if asked & CONTEXT != 0 {
        answers.push(Event::ContextReport {
            report: context_report(session, options),
        });
    }
    answers
}

/// What fills the next prompt, part by part, against the budget.
pub(crate) fn context_report(session: &mut Session, options: &AgentOptions) -> ContextReport {
    let counter = session.context.counter();
    let specs = options.tools.specs();
    let fixed = super::compaction::fixed_tokens_of(options, &counter);
    // Counts only: what summaries replaced is not needed, so the log is not read.
    let history = snapshot_of(&mut session.context, &[], fixed, &Recorded::NotNeeded);
    let summaries = history
        .entries
        .iter()
        .filter(|entry| entry.kind == HistoryEntryKind::Summary)
        .count();
    let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    ContextReport {
        system_prompt_tokens: counter.count(&options.system_prompt),
        instruction_files: options
            .instructions
            .files
            .iter()
            .map(|file| (file.path.display().to_string(), counter.count(&file.text)))
            .collect(),
        skills: count(
            options
                .skills_prompt
                .lines()
                .filter(|line| line.starts_with("- "))
                .count(),
        ),
        skills_tokens: counter.count(&options.skills_prompt),
        tools: count(specs.len()),
        tool_tokens: counter.tools(&specs),
        history: history.by_role.clone(),
        messages: count(history.entries.len() - summaries),
        summaries: count(summaries),
        masked_results: history.masked_results,
        trimmed_results: history.trimmed_results,
        output_reserve: u64::from(options.config.model.max_output_tokens),
        margin: crate::config::MARGIN_TOKENS,
        token_limit: options.config.agent.token_limit,
        context_window: options.config.model.context_window,
    }
}

/// Builds the snapshot of the session's context. Messages the context let go of (a
/// summary stands in for them) are read back from the session log.
pub(crate) fn snapshot(session: &mut Session, options: &AgentOptions) -> HistorySnapshot {
    let fixed = super::compaction::fixed_tokens_of(options, &session.context.counter());
    let released = (0..session.context.messages().len()).any(|i| session.context.is_released(i));
    let recorded = match (released, options.session_log.path()) {
        (false, _) => Recorded::NotNeeded,
        (true, None) => Recorded::Unreadable("the session is not recorded".to_string()),
        (true, Some(path)) => match off_the_workers(|| crate::session::load::messages(&path)) {
            Ok(messages) => Recorded::Messages(messages),
            Err(why) => Recorded::Unreadable(why.to_string()),
        },
    };
    snapshot_of(&mut session.context, &session.compaction_log, fixed, &recorded)
}

/// Runs `read` (a file read that may take tens of milliseconds on a long session) without
/// holding up other tasks: on a multi-threaded runtime the worker hands its tasks on.
fn off_the_workers<T>(read: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) if runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(read)
        }
        _ => read(),
    }
}

/// The whole context as the session log has it, for the messages the live one let go of.
pub(crate) enum Recorded {
    /// The live context holds every message.
    NotNeeded,
    Messages(Vec<Message>),
    /// Why the log could not be read.
    Unreadable(String),
}

/// The snapshot of a context with these compactions behind it; `fixed_tokens` are the
/// system prompt's and tool schemas'. Replay builds one from a log without an agent.
pub(crate) fn snapshot_of(
    context: &mut ContextState,
    compactions: &[CompactionRecord],
    fixed_tokens: u64,
    recorded: &Recorded,
) -> HistorySnapshot {
    let counter = context.counter();
    let prompt = context.prompt();
    let items = context.view_items();
    let tool_names = tool_names(context.messages());
    let mut entries = Vec::with_capacity(items.len());
    let mut by_role: BTreeMap<&str, u64> = BTreeMap::new();
    let mut by_tool: BTreeMap<String, u64> = BTreeMap::new();
    for (item, message) in items.iter().zip(&prompt) {
        let tokens = counter.message(message);
        match item {
            ViewItem::Summary(index) => {
                let summary = context.summaries()[*index].clone();
                *by_role.entry("summaries").or_default() += tokens;
                entries.push(summary_entry(context, recorded, &summary, tokens, false));
            }
            ViewItem::Message(_) => {
                let role = match message.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    Role::Tool => "tool results",
                };
                *by_role.entry(role).or_default() += tokens;
                if message.role == Role::Tool {
                    for block in &message.content {
                        if let ContentBlock::ToolResult {
                            tool_use_id, content, ..
                        } = block
                        {
                            let name = tool_names
                                .get(tool_use_id)
                                .cloned()
                                .unwrap_or_else(|| "unknown".to_string());
                            *by_tool.entry(name).or_default() += counter.count(content);
                        }
                    }
                }
                entries.push(entry(message, tokens, &tool_names));
            }
        }
    }
    HistorySnapshot {
        prompt_tokens: fixed_tokens.saturating_add(context.prompt_tokens()),
        entries,
        by_role: by_role.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        by_tool: by_tool.into_iter().collect(),
        compactions: compactions.to_vec(),
        masked_results: context.shown_masked_results() as u64,
        trimmed_results: context.shown_trimmed_results() as u64,
        set_aside: set_aside(context),
    }
}

/// What rewinds set aside, flat: each branch, then those set aside again with it.
fn set_aside(context: &ContextState) -> Vec<SetAsideBranch> {
    fn walk(context: &ContextState, branch: &SetAside, within: Option<u32>, out: &mut Vec<SetAsideBranch>) {
        let counter = context.counter();
        let names = tool_names(&branch.messages);
        let entries = branch
            .messages
            .iter()
            .enumerate()
            .map(|(offset, message)| {
                let number = branch.at + offset + 1;
                let summarized = branch
                    .summaries
                    .iter()
                    .any(|s| (s.start..s.end).contains(&(branch.at + offset)));
                let mut entry = entry(message, counter.message(message), &names);
                entry.title = format!("message {number} · {}", entry.title);
                if summarized && entry.body.trim().is_empty() {
                    entry.body = "A summary stood in for this message, so only the session log keeps its text (sessions show prints it).".to_string();
                }
                entry
            })
            .collect();
        out.push(SetAsideBranch {
            turn: branch.turn,
            from: branch.at as u64 + 1,
            within,
            entries,
        });
        for nested in &branch.nested {
            walk(context, nested, Some(branch.turn), out);
        }
    }
    let mut out = Vec::new();
    for branch in context.set_aside() {
        walk(context, branch, None, &mut out);
    }
    out
}

fn tool_names(messages: &[Message]) -> std::collections::HashMap<String, String> {
    messages
        .iter()
        .flat_map(|m| {
            m.tool_uses()
                .map(|call| (call.id.to_string(), call.name.to_string()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A summary as an entry: its text, what it stands for (the original messages' tokens,
/// however deep the summaries nest), and its originals, earlier summaries among them
/// opening on theirs in turn. `tokens` is what it takes in the prompt.
fn summary_entry(
    context: &mut ContextState,
    recorded: &Recorded,
    summary: &Summary,
    tokens: u64,
    earlier: bool,
) -> HistoryEntry {
    let stands_for = context.original_tokens(summary.start, summary.end);
    let originals = originals(context, recorded, summary.start, summary.end, &summary.nested);
    let range = message_range(summary.start as u64, summary.end as u64);
    HistoryEntry {
        kind: HistoryEntryKind::Summary,
        title: format!(
            "{}summary of messages {range}{}: {stands_for} → {tokens} tokens",
            if earlier { "earlier " } else { "" },
            if summary.fallback { " (digest)" } else { "" },
        ),
        tokens,
        body: cap(&summary.text),
        summary: Some(SummaryDetail {
            start: summary.start as u64,
            end: summary.end as u64,
            tokens_before: stands_for,
            fallback: summary.fallback,
            originals,
        }),
    }
}

/// The messages `start..end`, with summaries it absorbed shown as summaries (which open
/// on their own originals); those the context let go of come from `recorded`. Each title
/// starts with the message's number, as everywhere else (from 1).
fn originals(
    context: &mut ContextState,
    recorded: &Recorded,
    start: usize,
    end: usize,
    nested: &[Summary],
) -> Vec<HistoryEntry> {
    let counter = context.counter();
    let names = tool_names(context.messages());
    let mut out = Vec::new();
    let mut index = start;
    while index < end.min(context.messages().len()) {
        if let Some(inner) = nested.iter().find(|s| s.start == index) {
            out.push(summary_entry(context, recorded, inner, inner.tokens, true));
            index = inner.end.max(index + 1);
            continue;
        }
        let messages = context.messages();
        let message = match recorded {
            _ if !context.is_released(index) => Ok(&messages[index]),
            Recorded::Messages(full) => match full.get(index) {
                Some(recorded)
                    if recorded.role == messages[index].role
                        && recorded.content.len() == messages[index].content.len() =>
                {
                    Ok(recorded)
                }
                Some(_) => Err("the session log holds another message there".to_string()),
                None => Err("the session log ends before it".to_string()),
            },
            Recorded::Unreadable(why) => Err(why.clone()),
            Recorded::NotNeeded => Err("it was let go of".to_string()),
        };
        let number = index + 1;
        out.push(match message {
            Ok(message) => {
                let mut entry = entry(message, counter.message(message), &names);
                entry.title = format!("message {number} · {}", entry.title);
                entry
            }
            Err(why) => HistoryEntry {
                kind: kind_of(messages[index].role),
                title: format!("message {number}: its text is in the session log"),
                tokens: context.counted_tokens(index).unwrap_or(0),
                body: format!(
                    "This message was summarized, so only the session log keeps its text, and it cannot be shown: {why}."
                ),
                summary: None,
            },
        });
        index += 1;
    }
    out
}

fn entry(message: &Message, tokens: u64, names: &std::collections::HashMap<String, String>) -> HistoryEntry {
    let kind = kind_of(message.role);
    let mut body = String::new();
    let mut calls = Vec::new();
    let (mut masked, mut trimmed) = (0, 0);
    for block in &message.content {
        match block {
            ContentBlock::Text { text } => body.push_str(&format!("{text}\n")),
            ContentBlock::Thinking { thinking, .. } => {
                body.push_str(&format!("[thinking]\n{thinking}\n[/thinking]\n"))
            }
            ContentBlock::RedactedThinking { .. } => body.push_str("[redacted thinking]\n"),
            ContentBlock::ToolUse { name, input, .. } => {
                calls.push(name.clone());
                body.push_str(&format!("→ {name} {input}\n"));
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let name = names.get(tool_use_id).map(String::as_str).unwrap_or("tool");
                if content.starts_with("[result omitted to save context") {
                    masked += 1;
                }
                if content.starts_with("[result trimmed to save context") {
                    trimmed += 1;
                }
                let kind = if *is_error { "error" } else { "result" };
                body.push_str(&format!("← {name} {kind}:\n{content}\n"));
            }
        }
    }
    let first_line = message
        .text()
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_string();
    let title = match kind {
        HistoryEntryKind::ToolResults => {
            let count = message.content.len();
            let shown: String = [(masked, "masked"), (trimmed, "trimmed")]
                .iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, how)| format!(", {n} {how}"))
                .collect();
            format!("{count} tool result{}{shown}", if count == 1 { "" } else { "s" })
        }
        HistoryEntryKind::Assistant if !calls.is_empty() => {
            let lead = if first_line.is_empty() {
                String::new()
            } else {
                format!("{first_line} · ")
            };
            format!("{lead}calls {}", calls.join(", "))
        }
        _ => first_line,
    };
    HistoryEntry {
        kind,
        title,
        tokens,
        body: cap(&body),
        summary: None,
    }
}

fn kind_of(role: Role) -> HistoryEntryKind {
    match role {
        Role::User => HistoryEntryKind::User,
        Role::Assistant => HistoryEntryKind::Assistant,
        Role::Tool => HistoryEntryKind::ToolResults,
    }
}

fn cap(text: &str) -> String {
    crate::tools::output::cap_text(text, BODY_LIMIT)
}
