//! `sessions export --format md`: the whole conversation as markdown, thinking and tool
//! calls folded in `<details>`, every fence longer than what it holds.

use std::path::Path;

use super::{CallEnds, CallResult, Conversation, PlacedSummary, Results};
use super::{
    arguments_line, call_ends, conversations, long_time, orphan_results, placed_summaries, requested_calls,
};
use crate::session::Loaded;
use crate::session::store::SessionInfo;
use miniagent_protocol::message::{ContentBlock, Role};
use miniagent_text::clean;

/// Marks where the conversation was started over.
const STARTED_OVER: &str =
    "*The conversation was started over here; the model saw nothing above this line afterwards.*";

/// `sessions export --format md`: a title and the session's details, then the whole
/// conversation; thinking, tool calls and their results are folded in `<details>`.
pub fn markdown(loaded: &Loaded) -> String {
    // The file's path is not shown, so any will do.
    let info = SessionInfo::from_loaded(loaded, Path::new(""));
    let header = &loaded.header;
    let mut out = format!("# miniagent session {}\n\n", info.id);
    let fields = [
        ("Created", long_time(&info.created)),
        ("Updated", long_time(&info.updated)),
        ("Workspace", code_span(&info.workspace)),
        ("Model", format!("{} ({})", info.model, info.provider)),
        (
            "Turns",
            format!(
                "{} · **Steps:** {} · **Tokens:** {}",
                info.turns, info.steps, info.tokens
            ),
        ),
        ("Messages", info.messages.to_string()),
        ("miniagent", header.version.clone()),
    ];
    for (name, value) in fields {
        out.push_str(&format!("- **{name}:** {value}\n"));
    }
    for warning in &loaded.warnings {
        out.push_str(&format!("- **Warning:** {}\n", escape_html(warning)));
    }
    let ends = call_ends(loaded);
    for (i, conversation) in conversations(loaded).iter().enumerate() {
        if i > 0 {
            out.push_str(&format!("\n---\n\n{STARTED_OVER}\n"));
        }
        conversation_markdown(&mut out, conversation, &ends);
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Speaker {
    Nobody,
    User,
    Assistant,
}

/// One conversation: a heading when the speaker changes, blocks in order, summaries
/// marked over the messages they stand for.
fn conversation_markdown(out: &mut String, conversation: &Conversation, ends: &CallEnds) {
    let messages = &conversation.messages;
    let results = Results::new(messages, ends);
    let requested = requested_calls(messages);
    let summaries = placed_summaries(&conversation.summaries);
    let mut speaker = Speaker::Nobody;
    for (index, message) in messages.iter().enumerate() {
        if set_aside_markdown(out, conversation, index, ends) {
            speaker = Speaker::Nobody;
        }
        for placed in summaries.iter().filter(|p| p.summary.start == index) {
            summary_markdown(out, placed);
            speaker = Speaker::Nobody;
        }
        match message.role {
            Role::User => {
                out.push_str("\n## 👤 User\n\n");
                out.push_str(&balanced(message.text().trim_end()));
                out.push('\n');
                speaker = Speaker::User;
            }
            Role::Assistant => {
                if speaker != Speaker::Assistant {
                    out.push_str("\n## 🤖 Assistant\n");
                    speaker = Speaker::Assistant;
                }
                for block in &message.content {
                    match block {
                        ContentBlock::Thinking { thinking, .. } => {
                            out.push_str(&format!(
                                "\n<details><summary>Thinking</summary>\n\n{}\n\n</details>\n",
                                balanced(thinking.trim_end())
                            ));
                        }
                        ContentBlock::RedactedThinking { .. } => {
                            out.push_str("\n*(redacted thinking)*\n");
                        }
                        ContentBlock::Text { text } => {
                            out.push('\n');
                            out.push_str(&balanced(text.trim_end()));
                            out.push('\n');
                        }
                        ContentBlock::ToolUse { id, name, input } => {
                            call_markdown(out, name, input, &results.of(id));
                        }
                        ContentBlock::ToolResult { .. } => {}
                    }
                }
            }
            Role::Tool => {
                for content in orphan_results(message, &requested) {
                    out.push_str(&format!(
                        "\n<details><summary>🔧 result of an unknown call</summary>\n\n{}\n</details>\n",
                        fenced("", content)
                    ));
                }
            }
        }
        for _ in summaries.iter().filter(|p| p.summary.end == index + 1) {
            out.push_str("\n> *End of the messages the summary above stands for.*\n");
            speaker = Speaker::Nobody;
        }
    }
    set_aside_markdown(out, conversation, messages.len(), ends);
}

/// The branches rewinds set aside where the conversation went on at `index`, each folded
/// under a line saying so. Returns whether there was one.
fn set_aside_markdown(out: &mut String, conversation: &Conversation, index: usize, ends: &CallEnds) -> bool {
    let mut any = false;
    for branch in conversation.set_aside_at(index) {
        any = true;
        out.push_str(&format!(
            "\n<details><summary>↩️ {}; the conversation went on without them</summary>\n",
            super::rewound_line(branch)
        ));
        conversation_markdown(out, &Conversation::of_branch(branch), ends);
        out.push_str("\n</details>\n");
    }
    any
}

/// The opening of a summary's range: the summary, quoted.
fn summary_markdown(out: &mut String, placed: &PlacedSummary) {
    let s = placed.summary;
    let title = if placed.depth == 0 {
        "📝 Compaction summary"
    } else {
        "📝 Earlier compaction summary (later absorbed into the one above)"
    };
    let digest = if s.fallback {
        " It is a digest: the model could not write a summary."
    } else {
        ""
    };
    out.push_str(&format!(
        "\n> **{title}** of messages {} below: the model saw this in their place.{digest}\n>\n",
        miniagent_protocol::message_range(s.start as u64, s.end as u64)
    ));
    for line in balanced(s.text.trim_end()).lines() {
        out.push_str(format!("> {line}").trim_end());
        out.push('\n');
    }
}

/// A call folded: its arguments and its result in fences.
fn call_markdown(out: &mut String, name: &str, input: &serde_json::Value, result: &CallResult) {
    let arguments = arguments_line(input);
    // The name cleaned on its own, so nothing in it can hide the rest of the title.
    let mut title = format!("🔧 {}", clean(name));
    if !arguments.is_empty() {
        title.push_str(&format!(" — {arguments}"));
    }
    if !result.ok() {
        title.push_str(&format!(" ({})", result.label()));
    }
    let pretty = serde_json::to_string_pretty(input).unwrap_or_else(|_| input.to_string());
    out.push_str(&format!(
        "\n<details><summary>{}</summary>\n\n**Arguments**\n\n{}",
        escape_html(&title),
        fenced("json", &pretty)
    ));
    out.push_str(&format!("\n**Result** ({})\n\n", result.label()));
    match result.content {
        Some("") => out.push_str("*(no output)*\n"),
        Some(content) => out.push_str(&fenced("", content)),
        None => {}
    }
    out.push_str("\n</details>\n");
}

/// `content` in a fenced code block whose fence is longer than any backtick run inside,
/// so nothing in it can close the block early.
fn fenced(language: &str, content: &str) -> String {
    // Cleaned first, as it will be written: removing a control between two backtick runs
    // must not make a run the fence did not outrun.
    let content = clean(content);
    let fence = "`".repeat(longest_run(&content, '`').max(2) + 1);
    format!("{fence}{language}\n{}\n{fence}\n", content.trim_end_matches('\n'))
}

/// Inline code that holds any text (the delimiter outruns the backticks inside).
fn code_span(text: &str) -> String {
    let text = clean(text);
    let ticks = "`".repeat(longest_run(&text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// The longest run of `mark` in `text`.
fn longest_run(text: &str, mark: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for c in text.chars() {
        run = if c == mark { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// Markdown with a code fence it opened and never closed closed at its end, so the
/// fence cannot swallow the rest of the document.
fn balanced(markdown: &str) -> String {
    let markdown = clean(markdown);
    let mut open: Option<(char, usize)> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start_matches(' ');
        if line.len() - trimmed.len() > 3 {
            continue;
        }
        let Some(mark) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~') else {
            continue;
        };
        let run = trimmed.chars().take_while(|c| *c == mark).count();
        if run < 3 {
            continue;
        }
        open = match open {
            None => Some((mark, run)),
            Some((m, n)) if m == mark && run >= n && trimmed[run..].trim().is_empty() => None,
            still => still,
        };
    }
    match open {
        Some((mark, run)) => format!("{markdown}\n{}", mark.to_string().repeat(run)),
        None => markdown.into_owned(),
    }
}

/// Text safe inside an HTML element such as `<summary>`.
fn escape_html(text: &str) -> String {
    clean(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;
    use miniagent_protocol::message::Message;
    use pretty_assertions::assert_eq;

    #[test]
    fn markdown_folds_thinking_and_calls_and_keeps_the_answer() {
        let md = markdown(&one_turn("a.txt\nb.txt"));
        let conversation = &md[md.find("\n## 👤 User").expect("a user heading")..];
        assert_eq!(
            conversation,
            "\n## 👤 User\n\nlist files\n\
             \n## 🤖 Assistant\n\
             \n<details><summary>Thinking</summary>\n\nLook first.\n\n</details>\n\
             \n<details><summary>🔧 bash — ls</summary>\n\n**Arguments**\n\n```json\n{\n  \"command\": \"ls\"\n}\n```\n\
             \n**Result** (ok, 12 ms)\n\n```\na.txt\nb.txt\n```\n\n</details>\n\
             \nTwo files.\n"
        );
        assert!(
            md.starts_with(
                "# miniagent session 20261122-040438-abcd\n\n- **Created:** 2026-11-22 04:04:38 UTC\n"
            ),
            "{md}"
        );
        assert!(md.contains("- **Workspace:** `/tmp/w`\n"), "{md}");
    }

    #[test]
    fn content_with_backticks_cannot_break_out_of_its_fence() {
        let output = "see:\n```rust\nfn main() {}\n```\nand ````` five";
        let md = markdown(&one_turn(output));
        let expected = format!("\n**Result** (ok, 12 ms)\n\n``````\n{output}\n``````\n\n</details>\n");
        assert!(md.contains(&expected), "{md}");
        assert_eq!(fenced("", "plain"), "```\nplain\n```\n");
        assert_eq!(code_span("a`b"), "``a`b``");
    }

    #[test]
    fn controls_between_backticks_cannot_make_a_run_that_closes_the_fence() {
        // Cleaned, "```\x07```" is a run of six: the fence must outrun that.
        assert_eq!(fenced("", "```\x07```"), "```````\n``````\n```````\n");
        assert_eq!(code_span("`\x1b[m`"), "``` `` ```");
        assert_eq!(balanced("``\x07`sh\nls"), "```sh\nls\n```");
        assert_eq!(escape_html("<b\x1b]0;t\x07>"), "&lt;b&gt;");
    }

    #[test]
    fn an_unclosed_fence_in_model_text_is_closed_before_the_next_block() {
        assert_eq!(balanced("try\n```sh\nls"), "try\n```sh\nls\n```");
        assert_eq!(balanced("```\nx\n```\n~~~~\ny"), "```\nx\n```\n~~~~\ny\n~~~~");
        assert_eq!(balanced("```\nx\n```"), "```\nx\n```");
    }

    #[test]
    fn html_in_a_call_title_is_escaped() {
        let session = loaded(vec![messages(
            1,
            0,
            vec![
                Message::user("go"),
                assistant(vec![call("t1", "echo '</summary>' > x")]),
                result("t1", ""),
            ],
        )]);
        let md = markdown(&session);
        assert!(
            md.contains("<summary>🔧 bash — echo '&lt;/summary&gt;' &gt; x</summary>"),
            "{md}"
        );
        assert!(md.contains("**Result** (ok)\n\n*(no output)*\n"), "{md}");
    }

    #[test]
    fn markdown_marks_a_summary_over_the_messages_it_stands_for() {
        let md = markdown(&summarized());
        let start = md.find("> **📝 Compaction summary**").expect("summary marked");
        let end = md
            .find("> *End of the messages the summary above stands for.*")
            .expect("range end marked");
        assert_eq!(
            &md[start..md.find("\n\n## 🤖").expect("assistant heading")],
            "> **📝 Compaction summary** of messages 2–3 below: the model saw this in their place.\n>\n> Ran ls: two files."
        );
        let call = md.find("🔧 bash").expect("call kept");
        assert!(start < call && call < end, "{md}");
        assert!(end < md.find("Two files.").expect("answer"), "{md}");
    }

    #[test]
    fn a_call_without_a_result_says_the_session_ended() {
        let session = loaded(vec![messages(
            1,
            0,
            vec![Message::user("go"), assistant(vec![call("t1", "sleep 100")])],
        )]);
        let md = markdown(&session);
        assert!(
            md.contains("<summary>🔧 bash — sleep 100 (no result: the session ended while it ran)</summary>"),
            "{md}"
        );
    }
}
