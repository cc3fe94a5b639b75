//! What a rewind (`/rewind`, Esc Esc, `/undo`) does to the view once the agent answers:
//! [`Event::Rewound`] sets the rewound turns aside in the transcript and gives the
//! person's message back to the input, names the files put back and has the file tree
//! read them again; [`Event::RewindRefused`] says why nothing changed, naming the files
//! that stopped it. The picker, when still open, takes either answer too.

use super::{App, Pane};
use crate::conversation::NoticeKind;
use miniagent_protocol::{Event, RewindScope};

/// The most file names a notice lists; the rest are counted.
const FILES_NAMED: usize = 10;

/// Whether the rewound message goes back into the input: only when the rewind happens
/// now. A resumed or replayed session shows the transcript as it stood, and its input is
/// this workbench's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answered {
    Live,
    Recorded,
}

impl App {
    /// The agent rewound (`event` is an [`Event::Rewound`]).
    pub(crate) fn on_rewound(&mut self, event: &Event, answered: Answered) {
        let Event::Rewound {
            turn,
            scope,
            files,
            messages,
            text,
        } = event
        else {
            return;
        };
        let (turn, scope) = (*turn, *scope);
        self.undo_asked = false;
        if matches!(scope, RewindScope::Conversation | RewindScope::Both) {
            self.conversation.set_aside_from(turn);
            let plural = if *messages == 1 { "message" } else { "messages" };
            self.notice(
                NoticeKind::Info,
                format!(
                    "rewound to before turn {turn}: {messages} {plural} set aside (they stay in the session log; /history shows them)"
                ),
            );
            if answered == Answered::Live && !text.is_empty() {
                // Undoable: the input may have held a draft (Ctrl-Z brings it back).
                self.layout.focus_on(Pane::Input);
                self.input.replace_undoably(text);
            }
            self.conversation.scroll_to_bottom();
            // An inspector open beneath shows the shorter history and the branch.
            self.refresh_history_views();
        }
        if matches!(scope, RewindScope::Code | RewindScope::Both) {
            self.notice(NoticeKind::Info, put_back_line(turn, files));
        }
        self.tree.put_back(files);
        self.layers_take(event);
        self.layers.close_finished();
    }

    /// The agent refused a rewind (`event` is an [`Event::RewindRefused`]): nothing
    /// changed.
    pub(crate) fn on_rewind_refused(&mut self, event: &Event) {
        let Event::RewindRefused { message, files } = event else {
            return;
        };
        let what = match std::mem::take(&mut self.undo_asked) {
            true => "undo",
            false => "rewind",
        };
        let line = format!("{what} refused: {message}{}", files_not_named(message, files));
        self.turn.agent_noticed();
        self.notice(NoticeKind::Error, line);
        self.layers_take(event);
    }
}

/// The notice for a code rewind: which files were put back.
fn put_back_line(turn: u32, files: &[String]) -> String {
    match files.len() {
        0 => format!("rewound the code to before turn {turn}: no file needed putting back"),
        1 => format!("put back 1 file as it was before turn {turn}: {}", named(files)),
        count => format!(
            "put back {count} files as they were before turn {turn}: {}",
            named(files)
        ),
    }
}

/// What a refusal adds to its `message`: the files that stopped it, unless the message
/// already names every one (the agent's own words usually do).
pub(crate) fn files_not_named(message: &str, files: &[String]) -> String {
    if files.iter().all(|file| message.contains(file.as_str())) {
        return String::new();
    }
    format!(" (changed outside miniagent since: {})", named(files))
}

/// File names for one line of text: each cleaned (a name may hold any character but
/// `/` and NUL), at most [`FILES_NAMED`], the rest counted.
pub(crate) fn named(files: &[String]) -> String {
    let mut shown: Vec<String> = files
        .iter()
        .take(FILES_NAMED)
        .map(|file| one_line(file))
        .collect();
    if files.len() > FILES_NAMED {
        shown.push(format!("and {} more", files.len() - FILES_NAMED));
    }
    shown.join(", ")
}

/// `text` on one line: control characters shown as what they are, line breaks and
/// tabs as spaces.
pub(crate) fn one_line(text: &str) -> String {
    miniagent_text::visible(text)
        .chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn file_names_are_cleaned_and_capped() {
        let files: Vec<String> = (1..=12).map(|n| format!("f{n}.rs")).collect();
        assert_eq!(
            named(&files),
            "f1.rs, f2.rs, f3.rs, f4.rs, f5.rs, f6.rs, f7.rs, f8.rs, f9.rs, f10.rs, and 2 more"
        );
        assert_eq!(named(&["a\x1b[2Jb\nc.txt".to_string()]), "a␛[2Jb c.txt");
    }
}
