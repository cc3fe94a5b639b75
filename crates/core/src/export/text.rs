//! `sessions list` and `sessions show`: sessions and conversations as plain text.

use std::path::Path;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::{CallEnds, Conversation, PREVIEW_CHARS, Results, preview_line};
use super::{
    arguments_line, call_ends, conversations, long_time, orphan_results, placed_summaries, requested_calls,
    short_time,
};
use crate::session::Loaded;
use crate::session::store::SessionInfo;
use miniagent_protocol::message::{ContentBlock, Role};
use miniagent_text::clean;

/// Widest workspace column of `sessions list`; longer paths keep their end.
const LIST_WORKSPACE_WIDTH: usize = 40;
/// Characters of the first prompt `sessions list` shows.
const LIST_TITLE_CHARS: usize = 60;

/// `987`, `12.3k`, `4.5M`.
fn short_count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// `text` padded with spaces to `width` display columns.
fn pad(text: &str, width: usize) -> String {
    let mut out = text.to_string();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(text.width())));
    out
}

/// `text` cut to `width` display columns, keeping its end (the telling part of a path).
fn keep_end(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut kept = Vec::new();
    let mut used = 1; // the ellipsis
    for c in text.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        kept.push(c);
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}

/// `sessions list`: a header naming the columns, then one line per session, the id
/// first, columns aligned. A session whose turns got no reply is marked so.
pub fn list_lines(sessions: &[SessionInfo]) -> Vec<String> {
    let headings = [
        "SESSION",
        "CREATED",
        "STEPS",
        "TOKENS",
        "WORKSPACE",
        "FIRST PROMPT",
    ];
    let ids: Vec<String> = sessions.iter().map(|s| clean(&s.id).into_owned()).collect();
    let created: Vec<String> = sessions.iter().map(|s| short_time(&s.created)).collect();
    let workspaces: Vec<String> = sessions
        .iter()
        .map(|s| keep_end(&clean(&s.workspace), LIST_WORKSPACE_WIDTH))
        .collect();
    let steps: Vec<String> = sessions.iter().map(|s| steps_label(s.steps)).collect();
    let tokens: Vec<String> = sessions
        .iter()
        .map(|s| format!("{} tok", short_count(s.tokens)))
        .collect();
    let width = |column: &[String], heading: &str| {
        column
            .iter()
            .map(|c| c.width())
            .max()
            .unwrap_or(0)
            .max(heading.width())
    };
    let id_width = width(&ids, headings[0]);
    let created_width = width(&created, headings[1]);
    let steps_width = width(&steps, headings[2]);
    let tokens_width = width(&tokens, headings[3]);
    let workspace_width = width(&workspaces, headings[4]);
    let header = format!(
        "{}  {}  {:>steps_width$}  {:>tokens_width$}  {}  {}",
        pad(headings[0], id_width),
        pad(headings[1], created_width),
        headings[2],
        headings[3],
        pad(headings[4], workspace_width),
        headings[5],
    );
    let rows = sessions.iter().enumerate().map(|(i, session)| {
        let mark = if session.no_reply() { "(no reply) " } else { "" };
        format!(
            "{}  {}  {:>steps_width$}  {:>tokens_width$}  {}  {mark}{}",
            pad(&ids[i], id_width),
            pad(&created[i], created_width),
            steps[i],
            tokens[i],
            pad(&workspaces[i], workspace_width),
            clean(&session.title(LIST_TITLE_CHARS)),
        )
    });
    std::iter::once(header).chain(rows).collect()
}

/// `1 step`, `3 steps`.
fn steps_label(steps: u32) -> String {
    if steps == 1 {
        "1 step".to_string()
    } else {
        format!("{steps} steps")
    }
}

/// One session in a few words, for what `sessions rm` and `prune` say they removed:
/// `2026-11-22 04:04, 3 steps, /tmp/w: fix the build`.
pub fn session_summary(session: &SessionInfo) -> String {
    format!(
        "{}, {}, {}: {}",
        short_time(&session.created),
        steps_label(session.steps),
        keep_end(&clean(&session.workspace), LIST_WORKSPACE_WIDTH),
        clean(&session.title(LIST_TITLE_CHARS)),
    )
}

/// `sessions show`: the session's details, then its conversation as plain text.
pub fn show(loaded: &Loaded, path: &Path) -> String {
    let info = SessionInfo::from_loaded(loaded, path);
    let mut fields = vec![
        ("session", info.id.clone()),
        ("created", long_time(&info.created)),
        ("updated", long_time(&info.updated)),
        ("workspace", info.workspace.clone()),
        ("model", format!("{} ({})", info.model, info.provider)),
        ("turns", info.turns.to_string()),
        ("steps", info.steps.to_string()),
        ("tokens", info.tokens.to_string()),
        (
            "cost",
            info.cost_usd.map_or_else(
                || "unknown (no price for the model)".to_string(),
                miniagent_protocol::usd,
            ),
        ),
        ("messages", info.messages.to_string()),
        ("file", path.display().to_string()),
    ];
    fields.extend(loaded.warnings.iter().map(|w| ("warning", w.clone())));
    let mut out = String::new();
    for (name, value) in fields {
        out.push_str(&format!("{name:<10} {value}\n"));
    }
    let ends = call_ends(loaded);
    for (i, conversation) in conversations(loaded).iter().enumerate() {
        if i > 0 {
            out.push_str("\n── the conversation was started over ──\n");
        }
        conversation_text(&mut out, conversation, &ends);
    }
    out
}

/// Ends `out` with an empty line (once, however many blocks ask for one).
fn blank_line(out: &mut String) {
    while !out.ends_with("\n\n") {
        out.push('\n');
    }
}

/// One conversation as plain text: prompts, replies, one line per call, summaries framed.
fn conversation_text(out: &mut String, conversation: &Conversation, ends: &CallEnds) {
    let messages = &conversation.messages;
    let results = Results::new(messages, ends);
    let requested = requested_calls(messages);
    let summaries = placed_summaries(&conversation.summaries);
    for (index, message) in messages.iter().enumerate() {
        set_aside_text(out, conversation, index, ends);
        for placed in summaries.iter().filter(|p| p.summary.start == index) {
            let s = placed.summary;
            let what = if placed.depth == 0 {
                "the model saw this summary instead"
            } else {
                "an earlier summary, later absorbed"
            };
            let digest = if s.fallback {
                ", a digest: the model could not summarize"
            } else {
                ""
            };
            blank_line(out);
            out.push_str(&format!(
                "┌ summary of messages {} ({what}{digest}):\n",
                miniagent_protocol::message_range(s.start as u64, s.end as u64)
            ));
            for line in s.text.lines() {
                out.push_str(&format!("│ {line}\n"));
            }
        }
        match message.role {
            Role::User => {
                blank_line(out);
                for (i, line) in message.text().lines().enumerate() {
                    out.push_str(if i == 0 { "› " } else { "  " });
                    out.push_str(line);
                    out.push('\n');
                }
                out.push('\n');
            }
            Role::Assistant => {
                for block in &message.content {
                    match block {
                        ContentBlock::Thinking { thinking, .. } => {
                            out.push_str(&format!("  thinking: {}\n", preview_line(thinking, 100)));
                        }
                        ContentBlock::RedactedThinking { .. } => out.push_str("  thinking: (redacted)\n"),
                        ContentBlock::Text { text } => {
                            out.push_str(text.trim_end());
                            out.push('\n');
                        }
                        ContentBlock::ToolUse { id, name, input } => {
                            let result = results.of(id);
                            let mark = if result.ok() { "✓" } else { "✗" };
                            let arguments = arguments_line(input);
                            let preview = result
                                .content
                                .map(|c| format!(" → {}", preview_line(c, PREVIEW_CHARS)))
                                .unwrap_or_default();
                            out.push_str(&format!("  {mark} {}", clean(name)));
                            if !arguments.is_empty() {
                                out.push_str(&format!(" {arguments}"));
                            }
                            out.push_str(&format!(" ({}){preview}\n", result.label()));
                        }
                        ContentBlock::ToolResult { .. } => {}
                    }
                }
            }
            Role::Tool => {
                for content in orphan_results(message, &requested) {
                    out.push_str(&format!(
                        "  result of an unknown call: {}\n",
                        preview_line(content, PREVIEW_CHARS)
                    ));
                }
            }
        }
        for _ in summaries.iter().filter(|p| p.summary.end == index + 1) {
            out.push_str("└ end of the summarized messages\n");
        }
    }
    set_aside_text(out, conversation, messages.len(), ends);
}

/// The branches rewinds set aside where the conversation went on at `index`, each framed
/// under a line saying so, its messages marked down the side.
fn set_aside_text(out: &mut String, conversation: &Conversation, index: usize, ends: &CallEnds) {
    for branch in conversation.set_aside_at(index) {
        let mut inner = String::new();
        conversation_text(&mut inner, &Conversation::of_branch(branch), ends);
        blank_line(out);
        out.push_str(&format!("╭ {}:\n", super::rewound_line(branch)));
        for line in inner.trim_matches('\n').lines() {
            out.push_str(if line.is_empty() { "┆\n" } else { "┆ " });
            if !line.is_empty() {
                out.push_str(line);
                out.push('\n');
            }
        }
        out.push_str("╰ end of what was set aside; the conversation went on without it\n");
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;
    use crate::session::Header;
    use pretty_assertions::assert_eq;

    #[test]
    fn show_lists_details_then_the_conversation() {
        let mut session = summarized();
        session.warnings.push("the last line was cut short".into());
        let text = show(&session, Path::new("/d/s.jsonl"));
        assert_eq!(
            text,
            "session    20261122-040438-abcd\n\
             created    2026-11-22 04:04:38 UTC\n\
             updated    2026-11-22 04:04:40 UTC\n\
             workspace  /tmp/w\n\
             model      m (anthropic)\n\
             turns      1\n\
             steps      0\n\
             tokens     0\n\
             cost       unknown (no price for the model)\n\
             messages   4\n\
             file       /d/s.jsonl\n\
             warning    the last line was cut short\n\
             \n› list files\n\
             \n┌ summary of messages 2–3 (the model saw this summary instead):\n\
             │ Ran ls: two files.\n  \
             thinking: Look first.\n  \
             ✓ bash ls (ok, 12 ms) → a.txt\n\
             └ end of the summarized messages\n\
             Two files.\n"
        );
    }

    #[test]
    fn show_prints_what_a_rewind_set_aside_where_the_conversation_went_on_without_it() {
        use crate::session::Record;
        use miniagent_protocol::message::Message;
        use miniagent_protocol::record::Change;
        let rewound = |ts, to, turn| {
            Record::from_change(
                ts,
                Change::Rewound {
                    to,
                    turn,
                    results: 0,
                    trimmed: vec![],
                },
            )
        };
        let session = loaded(vec![
            messages(1, 0, vec![Message::user("one"), Message::assistant_text("first")]),
            messages(
                2,
                2,
                vec![
                    Message::user("two"),
                    assistant(vec![call("c1", "ls")]),
                    result("c1", "a.txt"),
                    Message::assistant_text("second"),
                ],
            ),
            messages(
                3,
                6,
                vec![Message::user("three"), Message::assistant_text("third")],
            ),
            rewound(4, 6, 3),
            rewound(5, 2, 2),
            messages(
                6,
                2,
                vec![Message::user("two again"), Message::assistant_text("again")],
            ),
        ]);
        let text = show(&session, Path::new("/d/s.jsonl"));
        let conversation = text.split_once("file       /d/s.jsonl\n").expect("details").1;
        assert_eq!(
            conversation,
            "\n› one\n\
             \nfirst\n\
             \n╭ rewound to before turn 2: 4 messages set aside:\n\
             ┆ › two\n\
             ┆\n\
             ┆   ✓ bash ls (ok) → a.txt\n\
             ┆ second\n\
             ┆\n\
             ┆ ╭ rewound to before turn 3: 2 messages set aside:\n\
             ┆ ┆ › three\n\
             ┆ ┆\n\
             ┆ ┆ third\n\
             ┆ ╰ end of what was set aside; the conversation went on without it\n\
             ╰ end of what was set aside; the conversation went on without it\n\
             \n› two again\n\
             \nagain\n"
        );
        // The details count the conversation as it stands.
        assert!(text.contains("\nmessages   4\n"), "{text}");
    }

    fn info(id: &str, workspace: &str, steps: u32, tokens: u64, prompt: &str) -> SessionInfo {
        let mut info = SessionInfo::new(
            &Header {
                id: id.into(),
                workspace: workspace.into(),
                ..header()
            },
            Path::new("x"),
        );
        info.steps = steps;
        info.tokens = tokens;
        info.first_prompt = Some(prompt.into());
        info
    }

    #[test]
    fn list_lines_start_with_the_id_and_align_in_display_width() {
        let lines = list_lines(&[
            info("20261122-040438-abcd", "/tmp/工作", 12, 12_345, "fix the\nbuild"),
            info("20261121-000000-0001", "/tmp/w", 1, 900, "hi"),
        ]);
        assert_eq!(
            lines,
            vec![
                "SESSION               CREATED              STEPS     TOKENS  WORKSPACE  FIRST PROMPT",
                "20261122-040438-abcd  2026-11-22 04:04  12 steps  12.3k tok  /tmp/工作  fix the build",
                "20261121-000000-0001  2026-11-22 04:04    1 step    900 tok  /tmp/w     hi",
            ]
        );
        assert_eq!(keep_end("/a/very/long/path", 8), "…ng/path");
        assert_eq!(keep_end("/工作/工作", 6), "…/工作");
        assert_eq!(keep_end("/工作/工作", 5), "…工作");
    }
}
