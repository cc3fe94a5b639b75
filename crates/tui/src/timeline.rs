//! The tool-call timeline: one row per call with its status, name, short arguments and
//! duration; the selected call opens a detail view.

use std::cell::Cell;
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::keys::KeyHint;
use super::output_buffer::{FINISHED_OUTPUT_BYTES, OutputBuffer};
use super::text::wrap;
use super::theme::Theme;
use miniagent_protocol::ToolOutcome;

/// One line of a call (its arguments, why it failed) as its row shows it: an escape
/// sequence shown as what it is (`␛[31m`: a path holding one is another file than the
/// one named without it, and the error the model got names it so), and every blank that
/// is not a space too (a no-break or ideographic space in a command reads as a plain one
/// otherwise), a newline as `␊`.
pub fn shown_line(text: &str) -> String {
    miniagent_text::exact(text).replace('\n', "\u{240a}")
}

/// Columns of a refusal's reason on a call's line.
const REFUSAL_COLUMNS: usize = 60;
/// Streamed output kept per call for the detail view (head and tail).
const OUTPUT_KEEP_BYTES: usize = 1 << 20;

/// Where a call stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallStatus {
    Queued,
    AwaitingApproval,
    Running,
    Ok,
    Error,
    Denied,
    /// Refused by a rule or a guard before it ran; nobody was asked.
    Refused,
    Cancelled,
}

impl CallStatus {
    /// A mark readable without colour, and its style.
    pub fn mark(self, theme: &Theme) -> (&'static str, Style) {
        match self {
            CallStatus::Queued => ("·", theme.dim),
            CallStatus::AwaitingApproval => ("?", theme.warning),
            CallStatus::Running => ("▶", theme.accent),
            CallStatus::Ok => ("✓", theme.ok),
            CallStatus::Error => ("✗", theme.error),
            CallStatus::Denied | CallStatus::Refused => ("⊘", theme.warning),
            CallStatus::Cancelled => ("■", theme.dim),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            CallStatus::Queued => "queued",
            CallStatus::AwaitingApproval => "awaiting approval",
            CallStatus::Running => "running",
            CallStatus::Ok => "ok",
            CallStatus::Error => "error",
            CallStatus::Denied => "denied",
            CallStatus::Refused => "refused",
            CallStatus::Cancelled => "cancelled",
        }
    }

    pub fn from_outcome(outcome: ToolOutcome) -> Self {
        match outcome {
            ToolOutcome::Ok => CallStatus::Ok,
            ToolOutcome::Error => CallStatus::Error,
            ToolOutcome::Denied => CallStatus::Denied,
            ToolOutcome::Refused => CallStatus::Refused,
            ToolOutcome::Cancelled => CallStatus::Cancelled,
        }
    }
}

/// One tool call as the workbench knows it.
pub struct Call {
    pub id: String,
    pub name: String,
    pub arguments: Value,
    pub summary: String,
    pub status: CallStatus,
    /// When the person was asked to approve it, until it started.
    pub asked: Option<Instant>,
    pub started: Option<Instant>,
    /// How long it waited for the person's approval, once it started.
    pub waited: Option<Duration>,
    /// How long it ran (the wait for approval is not part of it).
    pub duration: Option<Duration>,
    /// For a failed or refused call: one line saying how (exit status and error line,
    /// or the person's reason), as the agent summed it up.
    pub outcome_line: Option<String>,
    /// What the tool printed while it ran.
    pub streamed: OutputBuffer,
    /// The result the model received; `None` once forgotten (see `in_log`). Shared, so
    /// the conversation's search can look into it without a copy per frame.
    pub result: Option<std::sync::Arc<str>>,
    /// The result and the output were let go of to keep memory flat; the session log
    /// has them.
    pub in_log: bool,
    /// Why a rule or a guard refused the call (the result's first sentence), shown on
    /// its line in the conversation.
    pub refusal: Option<String>,
}

/// "12 ms", "4.2 s", "2 m 05 s".
pub fn format_duration(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", duration.as_secs_f64())
    } else {
        let secs = duration.as_secs();
        format!("{} m {:02} s", secs / 60, secs % 60)
    }
}

/// A call as the conversation's tool line shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolLine {
    pub status: CallStatus,
    pub duration: String,
    /// Under a failed or refused call: how it failed, or why it was refused.
    pub outcome: Option<String>,
    /// The result the model received, while the workbench holds it: a search of the
    /// conversation looks into it.
    pub result: Option<std::sync::Arc<str>>,
}

/// The calls of the session, in order.
#[derive(Default)]
pub struct Timeline {
    calls: Vec<Call>,
    /// Finished calls still holding their result, oldest first (indices into `calls`).
    holding_results: std::collections::VecDeque<usize>,
    selected: Option<usize>,
    /// The first row shown and the rows that fit, as the last frame drew them (drawing
    /// borrows the app immutably, so what it adjusts is in cells).
    scroll: Cell<usize>,
    height: Cell<usize>,
}

impl Timeline {
    pub fn calls(&self) -> &[Call] {
        &self.calls
    }

    pub fn get(&self, id: &str) -> Option<&Call> {
        self.calls.iter().rev().find(|call| call.id == id)
    }

    fn get_mut(&mut self, id: &str) -> Option<&mut Call> {
        self.calls.iter_mut().rev().find(|call| call.id == id)
    }

    /// A call the model asked for; `summary` is the agent's one line of its arguments.
    pub fn requested(&mut self, id: &str, name: &str, arguments: &Value, summary: &str) {
        // A selection on the newest call moves on to the calls that come after it, as a
        // log view's cursor on its last line follows the tail.
        let on_newest = self.selected.is_some() && self.selected == self.calls.len().checked_sub(1);
        self.calls.push(Call {
            id: id.to_string(),
            name: name.to_string(),
            summary: shown_line(summary),
            arguments: arguments.clone(),
            status: CallStatus::Queued,
            asked: None,
            started: None,
            waited: None,
            duration: None,
            outcome_line: None,
            streamed: OutputBuffer::new(OUTPUT_KEEP_BYTES),
            result: None,
            in_log: false,
            refusal: None,
        });
        if on_newest {
            self.selected = Some(self.calls.len() - 1);
        }
    }

    pub fn set_status(&mut self, id: &str, status: CallStatus, now: Instant) {
        if let Some(call) = self.get_mut(id) {
            match status {
                CallStatus::AwaitingApproval => call.asked = Some(now),
                CallStatus::Running => {
                    call.started = Some(now);
                    call.waited = call
                        .asked
                        .take()
                        .map(|asked| now.saturating_duration_since(asked));
                }
                CallStatus::Queued
                | CallStatus::Ok
                | CallStatus::Error
                | CallStatus::Denied
                | CallStatus::Refused
                | CallStatus::Cancelled => {}
            }
            call.status = status;
        }
    }

    pub fn output(&mut self, id: &str, delta: &str) {
        if let Some(call) = self.get_mut(id) {
            call.streamed.push(delta.as_bytes());
        }
    }

    /// A call ended; `line` is the agent's one-line summary of its result.
    pub fn finished(&mut self, id: &str, outcome: ToolOutcome, duration_ms: u64, output: &str, line: &str) {
        if let Some(call) = self.get_mut(id) {
            call.status = CallStatus::from_outcome(outcome);
            call.duration = Some(Duration::from_millis(duration_ms));
            call.asked = None;
            call.outcome_line = match outcome {
                ToolOutcome::Error | ToolOutcome::Denied if !line.trim().is_empty() => Some(shown_line(line)),
                ToolOutcome::Ok
                | ToolOutcome::Error
                | ToolOutcome::Denied
                | ToolOutcome::Refused
                | ToolOutcome::Cancelled => None,
            };
            if outcome == ToolOutcome::Refused {
                let line = output.lines().next().unwrap_or("");
                // The first clause: the detail view has the rest.
                let sentence = line.split([',', ';']).next().unwrap_or(line);
                let sentence = sentence.split(". ").next().unwrap_or(sentence);
                let sentence = shown_line(sentence.trim_end_matches('.'));
                call.refusal = Some(wrap::truncate(&sentence, REFUSAL_COLUMNS));
            }
            call.result = Some(output.into());
            call.streamed.shrink(FINISHED_OUTPUT_BYTES);
        }
        if let Some(index) = self.calls.iter().rposition(|call| call.id == id) {
            self.holding_results.push_back(index);
        }
    }

    /// Lets go of the results and output of all but the newest `keep` finished calls:
    /// the session log has them, and [`Timeline::restore`] brings one back when it is
    /// looked at.
    pub fn forget_old_results(&mut self, keep: usize) {
        while self.holding_results.len() > keep {
            let Some(index) = self.holding_results.pop_front() else {
                break;
            };
            if let Some(call) = self.calls.get_mut(index)
                && call.result.take().is_some()
            {
                call.streamed = OutputBuffer::new(0);
                call.in_log = true;
            }
        }
    }

    /// A forgotten call's result and output, read back from the log.
    /// It is let go of again when newer calls push it out.
    pub fn restore(&mut self, id: &str, result: String, output: Option<OutputBuffer>) {
        let Some(index) = self.calls.iter().rposition(|call| call.id == id) else {
            return;
        };
        let call = &mut self.calls[index];
        call.result = Some(result.into());
        if let Some(output) = output {
            call.streamed = output;
        }
        call.in_log = false;
        self.holding_results.push_back(index);
    }

    /// Calls that never finished (the turn ended): cancelled.
    pub fn cancel_open(&mut self) {
        for call in &mut self.calls {
            if matches!(
                call.status,
                CallStatus::Queued | CallStatus::AwaitingApproval | CallStatus::Running
            ) {
                call.status = CallStatus::Cancelled;
            }
        }
    }

    pub fn clear(&mut self) {
        *self = Timeline::default();
    }

    pub fn any_running(&self) -> bool {
        self.calls.iter().any(|call| call.status == CallStatus::Running)
    }

    /// What the conversation shows of a call: status, duration (for a call refused before
    /// it ran, why instead), and how a failure or a person's denial went.
    pub fn tool_line(&self, id: &str, now: Instant) -> Option<ToolLine> {
        self.get(id).map(|call| ToolLine {
            status: call.status,
            duration: call.refusal.clone().unwrap_or_else(|| duration_text(call, now)),
            outcome: call.outcome_line.clone(),
            result: call.result.clone(),
        })
    }

    /// No call is selected: the view follows the newest one, and ↑ or ↓ selects it.
    pub fn follow_newest(&mut self) {
        self.selected = None;
    }

    pub fn selected(&self) -> Option<&Call> {
        self.selected.and_then(|index| self.calls.get(index))
    }

    pub fn select_next(&mut self) {
        if self.calls.is_empty() {
            return;
        }
        self.selected = Some(match self.selected {
            Some(index) => (index + 1).min(self.calls.len() - 1),
            None => self.calls.len() - 1,
        });
    }

    pub fn select_previous(&mut self) {
        if self.calls.is_empty() {
            return;
        }
        self.selected = Some(match self.selected {
            Some(index) => index.saturating_sub(1),
            None => self.calls.len() - 1,
        });
    }

    /// Moves the selection by `rows` (negative: up), within the calls.
    pub fn select_by(&mut self, rows: i64) {
        let Some(last) = self.calls.len().checked_sub(1) else {
            return;
        };
        let from = self.selected.unwrap_or(last);
        let step = usize::try_from(rows.unsigned_abs()).unwrap_or(usize::MAX);
        self.selected = Some(if rows < 0 {
            from.saturating_sub(step)
        } else {
            from.saturating_add(step).min(last)
        });
    }

    /// Rows a page key moves.
    pub fn page(&self) -> usize {
        super::scroll::page_of(self.height.get())
    }

    pub fn select_row(&mut self, row: u16) -> bool {
        let index = self.scroll.get() + usize::from(row);
        if index < self.calls.len() {
            self.selected = Some(index);
            true
        } else {
            false
        }
    }

    pub fn scroll_by(&mut self, lines: i32) {
        let max = self.calls.len().saturating_sub(self.height.get());
        let next = i64::try_from(self.scroll.get()).unwrap_or(0) + i64::from(lines);
        self.scroll
            .set(usize::try_from(next.max(0)).unwrap_or(0).min(max));
    }

    pub fn key_hints(&self) -> Vec<KeyHint> {
        vec![
            KeyHint::new("↑/↓", "select a call"),
            KeyHint::new("PgUp/PgDn/Home/End", "move faster"),
            KeyHint::new("Enter", "call details"),
        ]
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, now: Instant, focused: bool) {
        let height = usize::from(area.height);
        self.height.set(height);
        if self.calls.is_empty() {
            if area.height > 0 {
                buf.set_stringn(
                    area.x,
                    area.y,
                    "no tool calls yet",
                    usize::from(area.width),
                    theme.dim,
                );
            }
            return;
        }
        // Keep the selection visible; otherwise follow the newest call.
        let scroll = self.scroll.get();
        let scroll = match self.selected {
            Some(index) if index < scroll => index,
            Some(index) if index >= scroll + height => index + 1 - height,
            Some(_) => scroll,
            None => self.calls.len().saturating_sub(height),
        };
        self.scroll.set(scroll);
        let width = usize::from(area.width);
        for (row, index) in (scroll..self.calls.len()).take(height).enumerate() {
            let call = &self.calls[index];
            let (mark, mark_style) = call.status.mark(theme);
            let duration = duration_text(call, now);
            let name_width = wrap::display_width(&call.name);
            let room = width.saturating_sub(2 + name_width + 1 + wrap::display_width(&duration) + 1);
            let summary = wrap::truncate(&call.summary, room);
            let pad = room.saturating_sub(wrap::display_width(&summary));
            let mut line = Line::from(vec![
                Span::styled(format!("{mark} "), mark_style),
                Span::styled(call.name.clone(), theme.tool),
                Span::raw(" "),
                Span::styled(summary, theme.text),
                Span::raw(" ".repeat(pad + 1)),
                Span::styled(duration, theme.dim),
            ]);
            if focused && self.selected == Some(index) {
                line = theme.selected(line);
            }
            let y = area.y + u16::try_from(row).unwrap_or(u16::MAX);
            buf.set_line(area.x, y, &line, area.width);
        }
    }
}

fn duration_text(call: &Call, now: Instant) -> String {
    match (call.status, call.duration, call.started) {
        // A call that never ran has no run time to show.
        (CallStatus::Denied | CallStatus::Cancelled, _, None) => String::new(),
        (_, Some(duration), _) => format_duration(duration),
        (CallStatus::Running, None, Some(started)) => format_duration(now.saturating_duration_since(started)),
        (CallStatus::AwaitingApproval, _, _) => "waiting".to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn durations() {
        assert_eq!(format_duration(Duration::from_millis(12)), "12 ms");
        assert_eq!(format_duration(Duration::from_millis(4200)), "4.2 s");
        assert_eq!(format_duration(Duration::from_secs(125)), "2 m 05 s");
    }

    /// A selection on the newest call moves to each call that comes after it; one left
    /// on an earlier call stays there.
    #[test]
    fn a_selection_on_the_newest_call_follows_new_calls() {
        let mut timeline = Timeline::default();
        let ids = |timeline: &Timeline| timeline.selected().map(|call| call.id.clone());
        timeline.requested("a", "bash", &json!({}), "");
        timeline.select_previous();
        assert_eq!(ids(&timeline), Some("a".into()));
        timeline.requested("b", "bash", &json!({}), "");
        assert_eq!(ids(&timeline), Some("b".into()));
        timeline.select_previous();
        timeline.requested("c", "bash", &json!({}), "");
        assert_eq!(ids(&timeline), Some("a".into()));
        timeline.follow_newest();
        assert_eq!(ids(&timeline), None);
        timeline.requested("d", "bash", &json!({}), "");
        timeline.select_previous();
        assert_eq!(ids(&timeline), Some("d".into()));
    }

    #[test]
    fn calls_move_through_their_states() {
        let now = Instant::now();
        let mut timeline = Timeline::default();
        timeline.requested("a", "bash", &json!({"command": "sleep 5"}), "sleep 5");
        timeline.set_status("a", CallStatus::Running, now);
        assert_eq!(
            timeline.tool_line("a", now + Duration::from_millis(4200)),
            Some(ToolLine {
                status: CallStatus::Running,
                duration: "4.2 s".into(),
                outcome: None,
                result: None,
            })
        );
        timeline.output("a", "partial");
        timeline.finished("a", ToolOutcome::Denied, 7, "refused", "denied by you: not now");
        assert_eq!(
            timeline.tool_line("a", now),
            Some(ToolLine {
                status: CallStatus::Denied,
                duration: "7 ms".into(),
                outcome: Some("denied by you: not now".into()),
                result: Some("refused".into()),
            })
        );
        // A failure's line comes from the tool's output: what reaches the screen is inert,
        // its escapes shown as the model got them.
        timeline.requested("c", "bash", &json!({}), "");
        timeline.finished(
            "c",
            ToolOutcome::Error,
            3,
            "x",
            "exit code 1 · \u{1b}]0;pwned\u{7}bad\u{1b}[2J",
        );
        assert_eq!(
            timeline.tool_line("c", now).and_then(|line| line.outcome),
            Some("exit code 1 · ␛]0;pwned␇bad␛[2J".into())
        );
        // A call that succeeded has no such line.
        timeline.requested("d", "bash", &json!({}), "");
        timeline.finished("d", ToolOutcome::Ok, 3, "x", "fine");
        assert_eq!(timeline.tool_line("d", now).and_then(|line| line.outcome), None);
        timeline.requested("b", "bash", &json!({}), "");
        timeline.cancel_open();
        assert_eq!(timeline.get("b").map(|c| c.status), Some(CallStatus::Cancelled));
    }
}
