//! The agent's side of checkpoints ([`crate::checkpoint`]): what a call changed, kept
//! and recorded as it runs; `/diff`, `/undo` and the code half of a rewind.

use std::sync::Arc;

use super::{AgentOptions, Session, Shared, TurnContext};
use crate::checkpoint::{Change, Checkpoints, Content, Ledger};
use crate::tools::files::{CHANGE_LIMIT_BYTES, text_change};
use crate::tools::paths::{Access, Workspace};
use miniagent_protocol::{
    CallEffect, Event, FileDiff, FileStatus, RewindScope, TextChange, ToolKind, TurnChanges,
};

pub(crate) use crate::checkpoint::Refusal;

/// The session's checkpoints, kept in `<data>/checkpoints/<session id>` (a session not
/// recorded keeps them in a folder of its own, removed when it ends).
pub(super) fn for_session(options: &AgentOptions) -> Arc<Checkpoints> {
    let (dir, temporary) = match (&options.checkpoints, options.session_log.id()) {
        (Some(root), Some(id)) => (Some(root.join(id)), false),
        (Some(root), None) => (
            Some(root.join(format!(
                "unrecorded-{}-{:08x}",
                std::process::id(),
                fastrand::u32(..)
            ))),
            true,
        ),
        (None, _) => (None, false),
    };
    // Compared with the paths of a walk from the resolved workspace: resolved too.
    let skip = options
        .protected
        .iter()
        .cloned()
        .chain(std::iter::once(options.workspace.join(".miniagent")))
        .map(|folder| folder.canonicalize().unwrap_or(folder))
        .collect();
    Arc::new(Checkpoints::new(
        options.config.checkpoints.clone(),
        skip,
        dir,
        temporary,
    ))
}

/// A resumed session goes on with its recorded changes, kept where its id says.
pub(super) fn resumed(shared: &Shared, ledger: Ledger) {
    let dir = shared
        .options
        .checkpoints
        .as_ref()
        .zip(shared.options.session_log.id())
        .map(|(root, id)| root.join(id));
    shared.checkpoints.resume(ledger, dir);
}

/// What is kept while one call runs.
pub(super) struct Watch {
    /// The files a file tool names, with their contents before it runs.
    files: Vec<(String, Content)>,
    /// A command: the workspace is looked at before and after.
    command: bool,
}

/// Keeps what call `changed` (the paths its tool names) or a command may change, before
/// it runs.
pub(super) async fn watch(context: &TurnContext, kind: ToolKind, changed: &[String]) -> Watch {
    let checkpoints = Arc::clone(&context.checkpoints);
    let nothing = Watch {
        files: Vec::new(),
        command: false,
    };
    if !checkpoints.enabled() {
        return nothing;
    }
    let command = kind == ToolKind::Execute;
    let paths: Vec<String> = changed
        .iter()
        .filter_map(|path| relative(&context.workspace, path))
        .collect();
    // Most calls neither run a command nor write a file: no task, no lock.
    if !command && paths.is_empty() {
        return nothing;
    }
    let workspace = Arc::clone(&context.workspace);
    let files = tokio::task::spawn_blocking(move || {
        if command {
            checkpoints.before_command(&workspace);
        }
        checkpoints.before_files(&workspace, &paths)
    })
    .await
    .unwrap_or_default();
    Watch { files, command }
}

/// After call `id` ran (or was stopped): what it changed, recorded in the session log;
/// for a command, each file it changed as an effect for front ends (the file tools say
/// theirs themselves).
pub(super) async fn finish(context: &TurnContext, id: &str, watch: Watch) -> Vec<CallEffect> {
    if !watch.command && watch.files.is_empty() {
        return Vec::new();
    }
    let checkpoints = Arc::clone(&context.checkpoints);
    let workspace = Arc::clone(&context.workspace);
    let call = id.to_string();
    let done = tokio::task::spawn_blocking(move || {
        let mut changes = checkpoints.after_files(&workspace, &call, watch.files);
        let detected = if watch.command {
            checkpoints.after_command(&workspace, &call)
        } else {
            Vec::new()
        };
        changes.extend(detected.iter().cloned());
        // A command may change thousands of files: their texts ride along only up to a
        // budget, so the event (and its record in the log) stays bounded.
        let mut budget = EFFECT_TEXT_BYTES;
        let effects: Vec<CallEffect> = detected
            .iter()
            .map(|change| CallEffect::FileChanged {
                path: workspace.root().join(&change.path).display().to_string(),
                change: effect_text(&checkpoints, change, &mut budget),
            })
            .collect();
        (changes, effects, checkpoints.take_notices())
    })
    .await;
    let Ok((changes, effects, notices)) = done else {
        return Vec::new();
    };
    for message in notices {
        context.events.emit(Event::Notice { message });
    }
    if !changes.is_empty()
        && let Some(problem) = context.options.session_log.file_changes(&changes)
    {
        context.events.emit(Event::Notice { message: problem });
    }
    effects
}

/// The most text (before and after together) one command's effects carry.
const EFFECT_TEXT_BYTES: u64 = 1024 * 1024;

/// A command's change to one file as text, for the tree's diff, when both sides are
/// small text and `budget` has room for them (what they take is taken from it).
fn effect_text(checkpoints: &Checkpoints, change: &Change, budget: &mut u64) -> Option<TextChange> {
    let size = |content: &Content| match content {
        Content::Kept { size, .. } => Some(*size),
        Content::Absent => Some(0),
        Content::NotKept { .. } => None,
    };
    let needed = size(&change.before)?.saturating_add(size(&change.after)?);
    if change.after == Content::Absent || needed > *budget {
        return None;
    }
    let after = String::from_utf8(checkpoints.bytes_of(&change.after)?).ok()?;
    let text = match &change.before {
        Content::Absent => text_change(None, &after),
        before => {
            let before = String::from_utf8(checkpoints.bytes_of(before)?).ok()?;
            text_change(Some(&before), &after)
        }
    }?;
    *budget -= needed;
    Some(text)
}

/// `path` as a tool names it, relative to the workspace, when it is inside.
fn relative(workspace: &Workspace, path: &str) -> Option<String> {
    let real = workspace.resolve(path, Access::Write).ok()?;
    let inside = real.strip_prefix(workspace.root()).ok()?;
    let text = inside.to_str()?;
    (!text.is_empty()).then(|| text.to_string())
}

/// Answers `Op::Diff` with `Event::DiffReport`, from a task of its own: the checkpoints'
/// lock is their own, so a running turn does not hold it up.
pub(super) fn diff(shared: &Shared, turn: Option<u32>) {
    let checkpoints = Arc::clone(&shared.checkpoints);
    let workspace = Arc::clone(&shared.workspace);
    let events = shared.events.clone();
    tokio::task::spawn_blocking(move || {
        let ledger = checkpoints.ledger();
        let files = ledger
            .spans(turn)
            .into_iter()
            .map(|span| {
                let latest = ledger.latest(&span.path).cloned().unwrap_or(Content::Absent);
                let changed_outside = checkpoints.changed_since(&workspace, &span.path, &latest);
                file_diff(&checkpoints, span, changed_outside)
            })
            .collect();
        let turns = ledger
            .turns_changed()
            .into_iter()
            .map(|(turn, files)| TurnChanges {
                turn,
                text: ledger.turn_text(turn),
                files,
            })
            .collect();
        // An answer about files on disk (and the kept copies): not recorded again in the
        // log, where each change is already.
        events.show(Event::DiffReport { turn, files, turns });
    });
}

/// One file's diff: its texts when both sides are small UTF-8 text, else why not.
fn file_diff(
    checkpoints: &Checkpoints,
    span: crate::checkpoint::ledger::Span,
    changed_outside: bool,
) -> FileDiff {
    let status = match (&span.before, &span.after) {
        (Content::Absent, _) => FileStatus::Added,
        (_, Content::Absent) => FileStatus::Deleted,
        _ => FileStatus::Modified,
    };
    let text = |content: &Content| -> Result<Option<String>, &'static str> {
        match content {
            Content::Absent => Ok(None),
            Content::NotKept { .. } => Err("not kept"),
            Content::Kept { size, .. } if *size > CHANGE_LIMIT_BYTES as u64 => Err("too large to show"),
            kept => match checkpoints.bytes_of(kept) {
                None => Err("not kept"),
                Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| "binary"),
            },
        }
    };
    let (change, note) = match (text(&span.before), text(&span.after)) {
        (Ok(old_text), Ok(new_text)) => (
            Some(TextChange {
                old_text,
                new_text: new_text.unwrap_or_default(),
            }),
            None,
        ),
        (Err("not kept"), _) => (None, Some("its earlier content was not kept".to_string())),
        (_, Err("not kept")) => (None, Some("its content was not kept".to_string())),
        (Err(why), _) | (_, Err(why)) => (None, Some(why.to_string())),
    };
    FileDiff {
        path: span.path,
        status,
        change,
        note,
        changed_outside,
    }
}

/// `/undo`: the latest turn whose file changes are still in place, taken back.
pub(super) async fn undo(shared: &Shared) {
    let mut session = shared.session.lock().await;
    let Some(turn) = shared.checkpoints.ledger().latest_in_place() else {
        shared.events.emit(Event::RewindRefused {
            message: "there are no file changes of this session to take back".to_string(),
            files: Vec::new(),
        });
        return;
    };
    match restore_code(shared, &mut session, turn).await {
        Ok(files) => shared.events.emit(Event::Rewound {
            turn,
            scope: RewindScope::Code,
            files,
            messages: 0,
            text: String::new(),
        }),
        Err(refusal) => shared.events.emit(Event::RewindRefused {
            message: refusal.message,
            files: refusal.files,
        }),
    }
    // Written out now, as a rewind is: the log says what was put back even if the
    // process ends before anything else happens.
    shared.events.checkpoint(&mut session);
}

/// Puts back every workspace file the session changed from turn `turn` on, as it was
/// just before that turn; refuses (changing nothing) when one was changed outside
/// miniagent since. Gives the files put back, relative to the workspace. What it wrote
/// is recorded, so a later rewind or undo goes on from what is on disk now.
pub(super) async fn restore_code(
    shared: &Shared,
    _session: &mut Session,
    turn: u32,
) -> Result<Vec<String>, Refusal> {
    let checkpoints = Arc::clone(&shared.checkpoints);
    let workspace = Arc::clone(&shared.workspace);
    let (changes, refused) = tokio::task::spawn_blocking(move || checkpoints.restore(&workspace, turn))
        .await
        .map_err(|err| Refusal {
            message: format!("the rewind stopped: {err}"),
            files: Vec::new(),
        })?;
    if !changes.is_empty()
        && let Some(problem) = shared.options.session_log.code_restored(turn, &changes)
    {
        shared.events.emit(Event::Notice { message: problem });
    }
    match refused {
        Some(refusal) => Err(refusal),
        None => Ok(changes.into_iter().map(|change| change.path).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// A command that rewrites many files: their texts ride along on the call's effects
    /// only up to [`EFFECT_TEXT_BYTES`].
    #[test]
    fn a_command_s_effects_carry_texts_only_up_to_a_budget() {
        let dir = std::env::temp_dir().join(format!("miniagent-effects-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("workspace")).unwrap();
        let root = dir.join("workspace").canonicalize().unwrap();
        let workspace = Workspace::new(&root, &[]);
        let settings = crate::config::CheckpointSettings {
            enabled: true,
            max_file_bytes: 1 << 20,
            max_files: 100,
            max_session_bytes: 64 << 20,
        };
        let checkpoints = Checkpoints::new(settings, Vec::new(), Some(dir.join("kept")), false);
        checkpoints.before_command(&workspace);
        let text = "x".repeat(200 * 1024);
        for n in 0..8 {
            std::fs::write(root.join(format!("f{n}.txt")), &text).unwrap();
        }
        let changes = checkpoints.after_command(&workspace, "call");
        let mut budget = EFFECT_TEXT_BYTES;
        let carried: Vec<bool> = changes
            .iter()
            .map(|change| effect_text(&checkpoints, change, &mut budget).is_some())
            .collect();
        assert_eq!(carried, vec![true, true, true, true, true, false, false, false]);
        assert_eq!(budget, EFFECT_TEXT_BYTES - 5 * 200 * 1024);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
