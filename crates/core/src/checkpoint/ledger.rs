//! The session's recorded file changes, in order, and what they add up to: a file's diff
//! over the session or a turn, which turns' changes are still in place, and what a
//! rewind would write back. Pure: nothing here reads the disk.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// A file's content at one moment, as the session log records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Content {
    /// No file there.
    Absent,
    /// Kept in the session's store under its SHA-256 (`id`), with its size and mode.
    Kept {
        id: String,
        size: u64,
        #[serde(default)]
        mode: u32,
    },
    /// Not kept (`reason` says why); `id` is its SHA-256 when it was read.
    NotKept {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        reason: String,
    },
}

/// What two contents can be told apart by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Identity<'a> {
    Absent,
    Digest(&'a str),
    /// Never read: it cannot be told whether it is the same as anything.
    Unknown,
}

impl Content {
    pub(crate) fn identity(&self) -> Identity<'_> {
        match self {
            Content::Absent => Identity::Absent,
            Content::Kept { id, .. } | Content::NotKept { id: Some(id), .. } => Identity::Digest(id),
            Content::NotKept { id: None, .. } => Identity::Unknown,
        }
    }

    /// Whether `self` and `other` are known to be the same content.
    pub(crate) fn same_as(&self, other: &Content) -> bool {
        let (mine, theirs) = (self.identity(), other.identity());
        mine != Identity::Unknown && mine == theirs
    }
}

/// One file changed by one call (or put back by a rewind).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The turn it happened in (for a rewind's writes: the turn rewound to).
    pub turn: u32,
    /// The call's id (`rewind` for a rewind's writes).
    pub call: String,
    /// Relative to the workspace.
    pub path: String,
    pub before: Content,
    pub after: Content,
}

/// One entry of the ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Changed(Change),
    /// The changes of turns `turn` and later still in place were put back (`changes`:
    /// what was written, each from what was on disk to what it was before).
    Restored {
        turn: u32,
        changes: Vec<Change>,
    },
}

/// What a file comes to over a span of changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub path: String,
    pub before: Content,
    pub after: Content,
}

/// What a code rewind would do to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    pub path: String,
    /// What it is written back to.
    pub target: Content,
    /// What the session last left there (the disk must still hold it).
    pub last: Content,
    /// Someone changed it between two of the changes being taken back.
    pub gap: bool,
}

/// Every file change a session recorded, in order, and its turns' messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    steps: Vec<Step>,
    texts: BTreeMap<u32, String>,
}

impl Ledger {
    pub fn push(&mut self, step: Step) {
        self.steps.push(step);
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Remembers turn `turn`'s message (for the turns a diff lists).
    pub fn name_turn(&mut self, turn: u32, text: &str) {
        self.texts.insert(turn, text.to_string());
    }

    pub fn turn_text(&self, turn: u32) -> String {
        self.texts.get(&turn).cloned().unwrap_or_default()
    }

    /// The calls' changes not taken back by a later rewind, in order.
    fn in_place(&self) -> impl Iterator<Item = &Change> {
        self.steps.iter().enumerate().filter_map(|(at, step)| match step {
            Step::Changed(change) => {
                let undone = self.steps[at + 1..]
                    .iter()
                    .any(|later| matches!(later, Step::Restored { turn, .. } if *turn <= change.turn));
                (!undone).then_some(change)
            }
            Step::Restored { .. } => None,
        })
    }

    /// Every change, the rewinds' writes included, in order.
    fn every_change(&self) -> impl Iterator<Item = &Change> {
        self.steps.iter().flat_map(|step| match step {
            Step::Changed(change) => std::slice::from_ref(change),
            Step::Restored { changes, .. } => changes.as_slice(),
        })
    }

    /// Every change of `path`, the rewinds' writes included, in order.
    fn chain<'a>(&'a self, path: &'a str) -> impl Iterator<Item = &'a Change> + 'a {
        self.every_change().filter(move |change| change.path == path)
    }

    /// What the session last left at `path`, if it changed it.
    pub fn latest<'a>(&'a self, path: &'a str) -> Option<&'a Content> {
        self.chain(path).last().map(|change| &change.after)
    }

    /// The latest turn with changes still in place (what `/undo` takes back).
    pub fn latest_in_place(&self) -> Option<u32> {
        self.in_place().map(|change| change.turn).max()
    }

    /// The files a code rewind to `turn` puts back, sorted.
    pub fn files_from(&self, turn: u32) -> Vec<String> {
        let files: BTreeSet<&str> = self
            .in_place()
            .filter(|change| change.turn >= turn)
            .map(|change| change.path.as_str())
            .collect();
        files.into_iter().map(str::to_string).collect()
    }

    /// What a code rewind to just before `turn` writes, file by file.
    pub fn plan(&self, turn: u32) -> Vec<Planned> {
        let in_place: Vec<&Change> = self.in_place().filter(|change| change.turn >= turn).collect();
        self.files_from(turn)
            .into_iter()
            .filter_map(|path| {
                let first = in_place.iter().find(|change| change.path == path)?;
                let chain: Vec<&Change> = self.chain(&path).collect();
                let start = chain.iter().position(|change| std::ptr::eq(*change, *first))?;
                let taken_back = &chain[start..];
                let gap = taken_back
                    .windows(2)
                    .any(|pair| !pair[1].before.same_as(&pair[0].after) && !unknown_both(pair[0], pair[1]));
                Some(Planned {
                    target: first.before.clone(),
                    last: chain
                        .last()
                        .map_or(Content::Absent, |change| change.after.clone()),
                    path,
                    gap,
                })
            })
            .collect()
    }

    /// Each file from before its first change to its latest content (`turn` `None`: the
    /// whole session, rewinds included) or over one turn's calls; files that came back
    /// to what they were are left out. Sorted by path.
    pub fn spans(&self, turn: Option<u32>) -> Vec<Span> {
        let mut spans: BTreeMap<&str, Span> = BTreeMap::new();
        let changes: Vec<&Change> = match turn {
            None => self.every_change().collect(),
            Some(turn) => self
                .steps
                .iter()
                .filter_map(|step| match step {
                    Step::Changed(change) if change.turn == turn => Some(change),
                    _ => None,
                })
                .collect(),
        };
        for change in changes {
            spans
                .entry(&change.path)
                .and_modify(|span| span.after = change.after.clone())
                .or_insert_with(|| Span {
                    path: change.path.clone(),
                    before: change.before.clone(),
                    after: change.after.clone(),
                });
        }
        spans
            .into_values()
            .filter(|span| !span.before.same_as(&span.after))
            .collect()
    }

    /// The turns whose calls changed files, with how many files each changed.
    pub fn turns_changed(&self) -> Vec<(u32, u32)> {
        let mut files: BTreeMap<u32, BTreeSet<&str>> = BTreeMap::new();
        for step in &self.steps {
            if let Step::Changed(change) = step {
                files.entry(change.turn).or_default().insert(&change.path);
            }
        }
        files
            .into_iter()
            .map(|(turn, paths)| (turn, u32::try_from(paths.len()).unwrap_or(u32::MAX)))
            .collect()
    }
}

/// Two contents neither of which was read: no gap can be seen between them.
fn unknown_both(earlier: &Change, later: &Change) -> bool {
    earlier.after.identity() == Identity::Unknown && later.before.identity() == Identity::Unknown
}
