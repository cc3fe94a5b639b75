//! What `exec` prints for a person (not `--json`): a line on stderr for each event worth
//! one, the final answer on stdout.

use miniagent_protocol::{
    CompactionOutcome, Event, McpState, RewindScope, SandboxState, attached_line, plan_lines, sane_cost,
    turn_usage_line,
};
use miniagent_text::{clean, preview_line, visible};

use super::{PLAN_LINE_CHARS, Printer, call_name, refusal, refusal_for, write_dim};

impl Printer {
    /// Fields followed by more text on their line are cleaned on their own, so a sequence
    /// left unfinished in one cannot hide the rest of the line.
    pub(super) fn human(&mut self, event: &Event, color: bool) {
        match event {
            Event::SessionConfigured { .. }
            | Event::ModelChangeRefused { .. }
            | Event::ModelChanged { .. }
            | Event::SessionResumed { .. } => self.human_session(event, color),
            Event::ThinkingDelta { .. }
            | Event::AssistantMessage { .. }
            | Event::ToolCallRequested { .. }
            | Event::ToolCallFinished { .. }
            | Event::SubAgent { .. }
            | Event::ApprovalRequested { .. } => self.human_step(event, color),
            Event::Retrying { .. }
            | Event::Notice { .. }
            | Event::FilesAttached { .. }
            | Event::PlanUpdated { .. }
            | Event::McpServerStatus { .. }
            | Event::SkillsLoaded { .. }
            | Event::HooksLoaded { .. }
            | Event::CommandsLoaded { .. }
            // A replay's, when the session was rewound.
            | Event::Rewound { .. }
            | Event::RewindRefused { .. } => self.human_status(event),
            Event::CompactionStarted { .. }
            | Event::CompactionEnded { .. }
            | Event::ContextCompacted { .. }
            | Event::TurnUsage { .. }
            | Event::TurnComplete { .. }
            | Event::StepLimitReached { .. }
            | Event::TurnAborted { .. }
            | Event::Error { .. } => self.human_turn(event, color),
            // Its notice said so when the tools were first held back.
            Event::McpToolsDeferred { .. }
            | Event::TurnStarted { .. }
            | Event::HistorySnapshot { .. }
            | Event::ContextReport { .. }
            | Event::DiffReport { .. }
            | Event::RewindPoints { .. }
            | Event::Notes { .. }
            | Event::RecordedCall { .. }
            | Event::ModelChoices { .. }
            // The error after it says the message was taken back.
            | Event::PromptReturned { .. }
            | Event::HistoryRestored { .. }
            | Event::ApprovalRulesChanged { .. }
            | Event::PermissionRulesChanged { .. }
            | Event::ApprovalModeChanged { .. }
            | Event::HistoryCleared
            | Event::StepStarted { .. }
            | Event::TextDelta { .. }
            | Event::ToolCallStarted { .. }
            | Event::ToolOutputDelta { .. }
            | Event::TokenUsage { .. }
            | Event::ShutdownComplete
            | Event::PlaybackOpened { .. }
            | Event::PlaybackStatus { .. }
            | Event::Replayed { .. } => {}
        }
    }

    /// The session's start and its model, a line each on stderr.
    fn human_session(&mut self, event: &Event, color: bool) {
        match event {
            Event::SessionConfigured {
                model,
                provider,
                workspace,
                sandbox,
                instruction_files,
                ..
            } => {
                self.dim_line(&session_line(model, provider, workspace, sandbox), color);
                // What steers the agent besides the prompt given, said before it starts.
                let instructions = miniagent_protocol::instruction_files_line(instruction_files);
                if !instructions.is_empty() {
                    self.dim_line(&instructions, color);
                }
            }
            Event::ModelChangeRefused { message, .. } => self.line(&clean(message)),
            // A replay of a session that switched shows where.
            Event::ModelChanged {
                model,
                provider,
                context_window,
                ..
            } => self.dim_line(
                &format!(
                    "model: {} ({}), window {context_window} tokens",
                    clean(model),
                    clean(provider)
                ),
                color,
            ),
            Event::SessionResumed { id, messages, turns } => self.dim_line(
                &format!(
                    "resumed session {}: {turns} turn(s), {messages} messages of history",
                    clean(id)
                ),
                color,
            ),
            _ => {}
        }
    }

    /// A step's reply and its calls (the call's line comes when it finishes).
    fn human_step(&mut self, event: &Event, color: bool) {
        match event {
            Event::ThinkingDelta { delta } => self.thinking_delta(delta, color),
            Event::AssistantMessage { text, tool_calls, .. } => {
                self.assistant_message(text, !tool_calls.is_empty())
            }
            Event::ToolCallRequested { id, summary, .. } => {
                self.call_arguments
                    .insert(id.clone(), preview_line(&visible(summary), 80));
            }
            Event::ToolCallFinished {
                id,
                name,
                ok,
                duration_ms,
                output_preview,
                ..
            } => self.call_finished(id, name, *ok, *duration_ms, output_preview),
            Event::SubAgent { agent, event, .. } => self.sub_agent(agent, event),
            // Said on the call's line when it finishes, with the refusal the model was told.
            Event::ApprovalRequested {
                id, request, notes, ..
            } => {
                self.refusals
                    .insert(id.clone(), refusal_for(request.as_ref(), notes));
            }
            _ => {}
        }
    }

    /// Progress and what was loaded: a line each on stderr.
    fn human_status(&mut self, event: &Event) {
        match event {
            Event::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
                ..
            } => self.line(&format!(
                "retrying ({attempt}/{max_attempts}) in {:.1} s: {reason}",
                *delay_ms as f64 / 1000.0
            )),
            Event::Notice { message } => self.line(&format!("note: {message}")),
            Event::FilesAttached { files } => {
                for file in files {
                    self.line(&format!("attached: {}", attached_line(file)));
                }
            }
            // A step a line, each kept to one (a recorded plan may have been edited).
            Event::PlanUpdated { entries } => {
                for (index, line) in plan_lines(entries).iter().enumerate() {
                    // The steps keep their indent (the one-line preview trims it).
                    let indent = if index == 0 { "" } else { "  " };
                    self.line(&format!("{indent}{}", preview_line(line, PLAN_LINE_CHARS)));
                }
            }
            Event::McpServerStatus { server, state } => self.mcp_status(server, state),
            Event::Rewound {
                turn,
                scope,
                files,
                messages,
                ..
            } => self.line(&rewound_line(*turn, *scope, files, *messages)),
            Event::RewindRefused { message, files } => {
                // Names shown with their control characters as symbols (as the
                // workbench shows them), so each names the file it is.
                self.line(&format!("rewind refused: {}", visible(message)));
                for file in files {
                    self.line(&format!("  not put back: {}", visible(file)));
                }
            }
            Event::SkillsLoaded { warnings, .. } => self.skill_warnings(warnings),
            Event::HooksLoaded { hooks } => self.hooks_loaded(hooks),
            Event::CommandsLoaded { warnings, .. } => {
                self.end_line();
                for warning in warnings {
                    self.line(&format!("commands: {warning}"));
                }
            }
            _ => {}
        }
    }

    /// Compaction and the turn's end: its figures, the answer or why there is none.
    fn human_turn(&mut self, event: &Event, color: bool) {
        match event {
                Event::CompactionStarted { reason } => self.line(&format!("compacting: {reason}")),
                Event::CompactionEnded { outcome, reason } => self.line(&compaction_ended_line(*outcome, reason)),
                Event::ContextCompacted {
                    tokens_before,
                    tokens_after,
                    fallback,
                    ..
                } => self.line(&compacted_line(*tokens_before, *tokens_after, *fallback)),
                Event::TurnUsage {
                    model_calls,
                    input_tokens,
                    output_tokens,
                    cache_read_tokens,
                    cost_usd,
                    ..
                // A turn whose every call failed has nothing to report.
                } if *model_calls > 0 => {
                    let cost = sane_cost(*cost_usd);
                    let line = turn_usage_line(*model_calls, *input_tokens, *output_tokens, *cache_read_tokens, cost);
                    self.dim_line(&format!("turn: {line}"), color);
                }
                Event::TurnComplete { text } => self.answer(text),
                Event::StepLimitReached { steps, report } => {
                    let plural = if *steps == 1 { "" } else { "s" };
                    self.line(&format!("step limit reached after {steps} step{plural}"));
                    self.answer(report);
                }
                Event::TurnAborted { reason } => self.line(&format!("aborted: {reason}")),
                Event::Error { message } => self.line(&format!("error: {message}")),
            _ => {}
        }
    }

    /// The model's text: the final answer goes to stdout at the end; text that
    /// accompanies tool calls is progress.
    fn assistant_message(&mut self, text: &str, calls_tools: bool) {
        self.end_line();
        if calls_tools && !text.trim().is_empty() {
            self.line(text.trim_end());
        }
    }

    /// One line per hook, so a run says which commands its events start.
    fn hooks_loaded(&mut self, hooks: &[miniagent_protocol::HookInfo]) {
        self.end_line();
        for hook in hooks {
            let command = miniagent_text::clean(&hook.command);
            let mut lines = command.split(['\n', '\r']);
            self.line(&format!(
                "hook: {} {} ({}, {} s): {}",
                hook.event,
                miniagent_text::clean(&hook.matcher),
                hook.source,
                hook.timeout_s,
                preview_line(lines.next().unwrap_or_default(), 200)
            ));
            // A command of several lines is several commands to the shell: each is shown
            // on a line of its own, never joined as one command's arguments.
            for line in lines {
                self.line(&format!("  {}", preview_line(line, 200)));
            }
        }
    }

    /// What was wrong with the skills found, a line each.
    fn skill_warnings(&mut self, warnings: &[String]) {
        self.end_line();
        for warning in warnings {
            self.line(&format!("skills: {warning}"));
        }
    }

    /// Thinking, dimmed, as it streams.
    fn thinking_delta(&mut self, delta: &str, color: bool) {
        let mut shown = String::new();
        self.thinking.push(delta, &mut shown);
        if !shown.is_empty() {
            write_dim(&shown, color);
            self.mid_line = !shown.ends_with('\n');
        }
    }

    /// A finished call's line: mark, name, arguments, time, and why it failed.
    fn call_finished(&mut self, id: &str, name: &str, ok: bool, duration_ms: u64, output: &str) {
        let arguments = self.call_arguments.remove(id).unwrap_or_default();
        let mark = if ok { "✓" } else { "✗" };
        let (detail, why) = self.failure(id, ok, output, 100);
        let name = call_name(name);
        self.line(&format!("{mark} {name} {arguments} ({duration_ms} ms){detail}"));
        self.why_line(why, "");
    }

    /// A sub-agent's finished calls, indented under its name; its approval requests are
    /// refused as the agent's own are.
    fn sub_agent(&mut self, agent: &str, event: &Event) {
        match event {
            Event::ToolCallFinished {
                id,
                name,
                ok,
                duration_ms,
                output_preview,
                ..
            } => {
                let mark = if *ok { "✓" } else { "✗" };
                let (agent, name) = (call_name(agent), call_name(name));
                // A sub-agent's line shows its output whether or not the call failed.
                let (detail, why) = match self.refusals.remove(id) {
                    Some(refused) => (format!(" {}", refusal(refused.fix)), refused.why),
                    None => (format!(" {}", preview_line(&visible(output_preview), 80)), None),
                };
                self.line(&format!("  ↳ {agent} {mark} {name} ({duration_ms} ms){detail}"));
                self.why_line(why, "  ");
            }
            Event::ApprovalRequested {
                id, request, notes, ..
            } => {
                self.refusals
                    .insert(id.clone(), refusal_for(request.as_ref(), notes));
            }
            _ => {}
        }
    }

    /// An MCP server that became ready or failed.
    fn mcp_status(&mut self, server: &str, state: &McpState) {
        match (clean(server), state) {
            (server, McpState::Ready { tools }) => {
                self.line(&format!("mcp: {server} ready ({} tools)", tools.len()))
            }
            (server, McpState::Failed { reason }) => self.line(&format!("mcp: {server} failed: {reason}")),
            (_, McpState::Connecting | McpState::Disabled) => self.end_line(),
        }
    }
}

/// The line of a summary call that replaced nothing.
fn compaction_ended_line(outcome: CompactionOutcome, reason: &str) -> String {
    match outcome {
        CompactionOutcome::Failed => format!("compaction failed: {reason}"),
        CompactionOutcome::Cancelled => format!("compaction cancelled: {reason}"),
    }
}

/// The line of a compaction: the prompt's tokens before and after, and whether a digest
/// stands in for the summary.
fn compacted_line(tokens_before: u64, tokens_after: u64, fallback: bool) -> String {
    format!(
        "context compacted: {tokens_before} → {tokens_after} tokens{}",
        if fallback {
            " (no summary could be written: a digest of the steps stands in)"
        } else {
            ""
        }
    )
}

/// The session's first line: provider, model, workspace and the sandbox.
fn session_line(model: &str, provider: &str, workspace: &str, sandbox: &SandboxState) -> String {
    let sandbox = match sandbox {
        SandboxState::Enforced => " · sandbox ✓".to_string(),
        SandboxState::Off => " · no sandbox in full-auto".to_string(),
        SandboxState::Unavailable { reason } => format!(" · no sandbox: {}", clean(reason)),
        SandboxState::Unknown => String::new(),
    };
    format!(
        "miniagent · {provider} · {} · {}{sandbox}",
        clean(model),
        clean(workspace)
    )
}

/// What a rewind did, in one line: `rewound to before turn 3: 4 messages set aside; put
/// back 2 files: a.rs, b.rs`.
pub(super) fn rewound_line(turn: u32, scope: RewindScope, files: &[String], messages: usize) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let conversation = format!("{} set aside", plural(messages, "message"));
    let code = if files.is_empty() {
        "no file to put back".to_string()
    } else {
        let names: Vec<String> = files.iter().map(|file| visible(file).into_owned()).collect();
        format!("put back {}: {}", plural(files.len(), "file"), names.join(", "))
    };
    let what = match scope {
        RewindScope::Conversation => conversation,
        RewindScope::Code => code,
        RewindScope::Both => format!("{conversation}; {code}"),
    };
    let subject = match scope {
        RewindScope::Conversation => "the conversation",
        RewindScope::Code => "the code",
        RewindScope::Both => "the code and the conversation",
    };
    format!("rewound {subject} to before turn {turn}: {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file named with control characters is named as itself (its controls shown as
    /// symbols), not as another file's name with them taken out.
    #[test]
    fn a_rewind_names_each_file_as_it_is() {
        let files = vec!["e\u{1b}[2Jvil.txt".to_string(), "evil.txt".to_string()];
        assert_eq!(
            rewound_line(3, RewindScope::Code, &files, 0),
            "rewound the code to before turn 3: put back 2 files: e␛[2Jvil.txt, evil.txt"
        );
    }
}
