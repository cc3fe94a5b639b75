//! Figures as every face shows them: token counts, costs, a turn's usage line, history
//! message ranges and the agent's plan, so the workbench, `exec` and `sessions` say them
//! alike.

use crate::{Attached, AttachedFile, PlanEntry, PlanPriority, PlanStatus};

/// What of an `@path` mention went with the message ([`crate::Event::FilesAttached`]),
/// in words after its path: `src/main.rs (120 lines)`, `log.txt (first 400 of 9000
/// lines)`, `big.bin (3.1 MiB, by reference)`, `../x (not attached: why)`. The path is as
/// the message named it: a face cleans it for its terminal.
pub fn attached_line(file: &AttachedFile) -> String {
    let lines = match file.lines {
        Some(1) => "1 line".to_string(),
        Some(lines) => format!("{lines} lines"),
        None => "lines not counted".to_string(),
    };
    let what = match &file.attached {
        Attached::Whole => lines,
        Attached::Part { lines: sent } => format!("first {sent} of {lines}"),
        Attached::Reference => format!("{}, by reference", size(file.bytes)),
        Attached::Refused { reason } => format!("not attached: {reason}"),
    };
    format!("{} ({what})", file.path)
}

/// A file's size: `512 bytes`, `40 KiB`, `3.1 MiB`.
fn size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    match bytes {
        b if b >= KIB * KIB => format!("{:.1} MiB", b as f64 / (KIB * KIB) as f64),
        b if b >= KIB => format!("{} KiB", b / KIB),
        b => format!("{b} bytes"),
    }
}

/// The agent's plan ([`crate::Event::PlanUpdated`]) as lines of plain text: a heading
/// with how far it got, then a step a line, marked `✓` done, `▸` in progress, `○` to do,
/// with its priority when one was given and its note after a dash. The steps are as the
/// model wrote them: a face cleans them for its terminal.
pub fn plan_lines(entries: &[PlanEntry]) -> Vec<String> {
    let done = entries
        .iter()
        .filter(|entry| entry.status == PlanStatus::Completed)
        .count();
    let heading = match entries.len() {
        0 => "plan: cleared".to_string(),
        n => format!("plan: {done} of {n} done"),
    };
    std::iter::once(heading)
        .chain(entries.iter().map(|entry| {
            let mark = match entry.status {
                PlanStatus::Completed => '✓',
                PlanStatus::InProgress => '▸',
                PlanStatus::Pending => '○',
            };
            let priority = match entry.priority {
                Some(PlanPriority::High) => " (high)",
                Some(PlanPriority::Medium) => " (medium)",
                Some(PlanPriority::Low) => " (low)",
                None => "",
            };
            let note = entry
                .note
                .as_ref()
                .map(|note| format!(" — {note}"))
                .unwrap_or_default();
            format!("  {mark} {}{priority}{note}", entry.content)
        }))
        .collect()
}

/// How far the plan got, short, for a title bar or a one-line note: `plan 3/7`.
pub fn plan_progress(entries: &[PlanEntry]) -> String {
    let done = entries
        .iter()
        .filter(|entry| entry.status == PlanStatus::Completed)
        .count();
    format!("plan {done}/{}", entries.len())
}

/// A token count as every face shows it: `950`, `1.2k`, `34k`, `1.3M`.
pub fn short_count(count: u64) -> String {
    // Rounded to the nearest: 15,800 is "16k", not "15k"; 999,600 is "1.0M".
    if count >= 999_500 {
        format!("{:.1}M", count as f64 / 1e6)
    } else if count >= 9_950 {
        format!("{}k", (count + 500) / 1000)
    } else if count >= 1000 {
        format!("{:.1}k", count as f64 / 1000.0)
    } else {
        count.to_string()
    }
}

/// One line saying what a turn used ([`crate::Event::TurnUsage`]'s figures): `12 model calls ·
/// in 640k, 590k of it from the cache · out 3.1k · $0.214`.
pub fn turn_usage_line(
    model_calls: u64,
    input: u64,
    output: u64,
    cache_read: u64,
    cost: Option<f64>,
) -> String {
    let mut line = format!(
        "{model_calls} model call{} · in {}",
        if model_calls == 1 { "" } else { "s" },
        short_count(input)
    );
    if cache_read > 0 {
        line.push_str(&format!(", {} of it from the cache", short_count(cache_read)));
    }
    line.push_str(&format!(" · out {}", short_count(output)));
    if let Some(cost) = cost {
        line.push_str(&format!(" · {}", usd(cost)));
    }
    line
}

/// More US dollars than one session truthfully costs.
pub const MAX_SESSION_COST_USD: f64 = 1_000_000.0;

/// A cost as far as it can be true (a recording or a provider may say anything): not
/// negative, not a NaN, under [`MAX_SESSION_COST_USD`]; else no cost is known.
pub fn sane_cost(cost: Option<f64>) -> Option<f64> {
    cost.filter(|cost| (0.0..MAX_SESSION_COST_USD).contains(cost))
}

/// A cost in US dollars as every face shows it: `$0.042`, `$1.23`, `<$0.001`.
pub fn usd(cost: f64) -> String {
    if !cost.is_finite() || cost < 0.0 {
        return "$?".to_string();
    }
    if cost > 0.0 && cost < 0.0005 {
        "<$0.001".to_string()
    } else if cost < 0.995 {
        format!("${cost:.3}")
    } else {
        format!("${cost:.2}")
    }
}

/// History messages as a person reads them: numbered from 1, `start..end` shown as
/// `start+1–end` (one numbering for the inspector, `/stats`, `exec` and `sessions`).
pub fn message_range(start: u64, end: u64) -> String {
    let first = start.saturating_add(1);
    let last = end.max(first);
    if last == first {
        first.to_string()
    } else {
        format!("{first}–{last}")
    }
}

/// [`message_range`] with its noun: "message 6", "messages 6–9".
pub fn messages_named(start: u64, end: u64) -> String {
    let range = message_range(start, end);
    if range.contains('–') {
        format!("messages {range}")
    } else {
        format!("message {range}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Fresh-eyes finding 1: one message is "message 6", not "messages 6".
    #[test]
    fn one_message_is_named_in_the_singular() {
        let named: Vec<String> = [(5, 6), (5, 9), (5, 5)]
            .into_iter()
            .map(|(start, end)| messages_named(start, end))
            .collect();
        assert_eq!(named, vec!["message 6", "messages 6–9", "message 6"]);
    }

    #[test]
    fn short_counts_round_to_the_nearest() {
        let cases = [
            (0, "0"),
            (999, "999"),
            (1_000, "1.0k"),
            (9_949, "9.9k"),
            (9_950, "10k"),
            (15_800, "16k"),
            (15_499, "15k"),
            (999_499, "999k"),
            (999_500, "1.0M"),
            (2_160_000, "2.2M"),
        ];
        for (count, shown) in cases {
            assert_eq!(short_count(count), shown, "{count}");
        }
    }

    #[test]
    fn an_attached_file_says_what_of_it_went_with_the_message() {
        use crate::{Attached, AttachedFile};
        let file = |lines, bytes, attached| AttachedFile {
            path: "a.rs".into(),
            bytes,
            lines,
            attached,
        };
        let cases = [
            (file(Some(1), 10, Attached::Whole), "a.rs (1 line)"),
            (file(Some(120), 2_000, Attached::Whole), "a.rs (120 lines)"),
            (
                file(Some(9_000), 90_000, Attached::Part { lines: 400 }),
                "a.rs (first 400 of 9000 lines)",
            ),
            (
                file(None, 3_300_000, Attached::Reference),
                "a.rs (3.1 MiB, by reference)",
            ),
            (
                file(None, 300 * 1024, Attached::Reference),
                "a.rs (300 KiB, by reference)",
            ),
            (
                file(
                    None,
                    0,
                    Attached::Refused {
                        reason: "it is a binary file".into(),
                    },
                ),
                "a.rs (not attached: it is a binary file)",
            ),
        ];
        for (file, shown) in cases {
            assert_eq!(attached_line(&file), shown);
        }
    }

    #[test]
    fn a_plan_is_a_heading_and_a_marked_line_per_step() {
        use crate::{PlanEntry, PlanPriority, PlanStatus};
        let entry = |content: &str, status, priority| PlanEntry {
            content: content.into(),
            status,
            priority,
            note: None,
        };
        let plan = [
            entry("read it", PlanStatus::Completed, None),
            PlanEntry {
                note: Some("the lexer too".into()),
                ..entry("fix it", PlanStatus::InProgress, Some(PlanPriority::High))
            },
            entry("test it", PlanStatus::Pending, Some(PlanPriority::Low)),
        ];
        assert_eq!(
            plan_lines(&plan),
            vec![
                "plan: 1 of 3 done",
                "  ✓ read it",
                "  ▸ fix it (high) — the lexer too",
                "  ○ test it (low)",
            ]
        );
        assert_eq!(plan_lines(&[]), vec!["plan: cleared"]);
        assert_eq!(
            (plan_progress(&plan), plan_progress(&[])),
            ("plan 1/3".to_string(), "plan 0/0".to_string())
        );
    }
}
