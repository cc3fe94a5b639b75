//! `write_file {path, content}` and `edit_file {path, old_str, new_str, replace_all?}`.
//! Both are confined to the workspace, write atomically, and preview as a unified diff.

use std::io::{Read, Seek, SeekFrom};

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::client_files::{self, ClientText};
use super::files::{human_size, text_change, unified_diff};
use super::output::cap_text;
use super::paths::{Access, Located, OpenError, OpenedFile, Workspace};
use super::read::has_hole;
use super::{ToolContext, ToolEffect, ToolOutput};
use miniagent_protocol::{ApprovalRequest, Location};

/// Context lines around each change in diffs.
const DIFF_CONTEXT: usize = 3;
/// Bytes of diff shown in results and previews.
const DIFF_LIMIT: usize = 8_000;
/// The largest file edit_file edits (and write_file reads for its diff): both hold it
/// whole, with its edited copy and their diff.
const MAX_EDIT_BYTES: u64 = 8 * 1024 * 1024;

/// A diff to be approved, cut to about [`DIFF_LIMIT`] bytes at a line's end, from the
/// top (so every line keeps its number), and ending, when cut, with a line that says how
/// much is not shown and how large the whole file is: approving after reading all of
/// the preview must not pass for having read all of the file. A line longer than the
/// room left is shown in part, and the last line says so.
fn cap_diff(diff: &str, whole: &str) -> String {
    if diff.len() <= DIFF_LIMIT {
        return diff.to_string();
    }
    let mut shown = String::with_capacity(DIFF_LIMIT + 200);
    let mut lines = diff.split_inclusive('\n');
    let mut in_part = false;
    for line in lines.by_ref() {
        let room = DIFF_LIMIT - shown.len();
        if line.len() <= room {
            shown.push_str(line);
            continue;
        }
        // A long line gets what room is left, unless that is a few bytes only.
        if room >= DIFF_LIMIT / 4 {
            let mut end = room;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            shown.push_str(&line[..end]);
            shown.push('\n');
            in_part = true;
        } else {
            // Counted with the lines not shown.
            return shown + &not_shown_line(1 + lines.count(), false, whole);
        }
        break;
    }
    let more = lines.count();
    shown + &not_shown_line(more, in_part, whole)
}

/// The line that ends a cut diff ([`cap_diff`]): not a line of the diff (no sign), so the
/// preview draws it apart from the file's lines.
fn not_shown_line(more: usize, in_part: bool, whole: &str) -> String {
    let bytes = grouped(whole.len());
    let lines = match whole.lines().count() {
        1 => "1 line".to_string(),
        n => format!("{} lines", grouped(n)),
    };
    let rest = match (in_part, more) {
        (true, 0) => "the rest of the line above is not shown".to_string(),
        (true, n) => format!(
            "the rest of the line above and {} more line{} of the diff are not shown",
            grouped(n),
            if n == 1 { "" } else { "s" }
        ),
        (false, 1) => "1 more line of the diff is not shown".to_string(),
        (false, n) => format!("{} more lines of the diff are not shown", grouped(n)),
    };
    format!("… {rest} (whole file: {bytes} bytes, {lines})\n")
}

/// `n` with a comma every three digits: `400,000`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `write_file`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// File path, relative to the workspace or absolute inside it.
    pub path: String,
    /// The complete new content.
    pub content: String,
}

/// `edit_file`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// File path, relative to the workspace or absolute inside it.
    pub path: String,
    /// The exact text to replace.
    pub old_str: String,
    /// The text to put in its place.
    pub new_str: String,
    /// Replace every occurrence (default false).
    pub replace_all: Option<bool>,
}

/// Why a file's text was not read.
enum Unread {
    /// Over [`MAX_EDIT_BYTES`]; this many bytes.
    TooLarge(u64),
    /// A NUL byte, or a hole of a sparse file; this many bytes.
    Binary(u64),
    NotUtf8(u64),
    Io(std::io::Error),
}

/// The text of an opened file, read only when it is a text file of at most
/// [`MAX_EDIT_BYTES`]: a 1 GB sparse file is answered from its size and holes, unread.
fn read_text(opened: OpenedFile) -> Result<String, Unread> {
    let size = opened.size;
    if size > MAX_EDIT_BYTES {
        return Err(Unread::TooLarge(size));
    }
    if has_hole(&opened.file, size) {
        return Err(Unread::Binary(size));
    }
    let mut file = opened.file;
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.take(MAX_EDIT_BYTES + 1).read_to_end(&mut bytes))
        .map_err(Unread::Io)?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read > MAX_EDIT_BYTES {
        // It grew since it was opened.
        return Err(Unread::TooLarge(read));
    }
    if memchr::memchr(0, &bytes).is_some() {
        return Err(Unread::Binary(read));
    }
    String::from_utf8(bytes).map_err(|_| Unread::NotUtf8(read))
}

/// The editor's text of a file, held to what [`read_text`] holds the disk's to: at most
/// [`MAX_EDIT_BYTES`], no NUL byte.
fn checked(text: String) -> Result<String, Unread> {
    let size = u64::try_from(text.len()).unwrap_or(u64::MAX);
    if size > MAX_EDIT_BYTES {
        return Err(Unread::TooLarge(size));
    }
    if memchr::memchr(0, text.as_bytes()).is_some() {
        return Err(Unread::Binary(size));
    }
    Ok(text)
}

/// A file write_file replaces: its text for the diff and how the result names it.
struct Before {
    text: String,
    said: String,
    /// `text` is the file's (not a description of a file left unread).
    read: bool,
}

impl Before {
    /// What the change replaces, for [`text_change`]: `Some(None)` for a new file,
    /// `None` when the old text was not read.
    fn old_text(before: Option<&Before>) -> Option<Option<&str>> {
        match before {
            None => Some(None),
            Some(before) if before.read => Some(Some(before.text.as_str())),
            Some(_) => None,
        }
    }
}

/// A file replaced without its text read; `said` says what it is.
fn unread(said: String) -> Result<Option<Before>, String> {
    Ok(Some(Before {
        text: format!("({said}; its content is not read)\n"),
        said,
        read: false,
    }))
}

/// The current text of a file to be replaced: `None` when it does not exist yet. A file
/// with several hard links is replaced without being read (it may be shared with a file
/// outside the workspace; the rename gives the workspace its own file), and so is one too
/// large or binary: it is still replaceable, its diff is described, not shown. A text
/// file the editor holds is read from the editor ([`client_files`]), unsaved changes and
/// all; one it has no such file for is new.
async fn existing_text(
    workspace: &Workspace,
    located: &Located,
    shown: &str,
) -> Result<Option<Before>, String> {
    let on_disk = existing_text_on_disk(located, shown)?;
    // The disk says what the file is; only a text file read whole is the editor's to say.
    if !on_disk.as_ref().is_some_and(|before| before.read) {
        return Ok(on_disk);
    }
    match client_files::read(workspace, located.path()).await {
        ClientText::Disk => Ok(on_disk),
        ClientText::NotFound => Ok(None),
        ClientText::Text(text) => match checked(text) {
            Ok(text) => Ok(Some(Before {
                said: format!("{} bytes", text.len()),
                text,
                read: true,
            })),
            Err(Unread::TooLarge(size)) => unread(format!("a file of {}", human_size(size))),
            Err(Unread::Binary(size) | Unread::NotUtf8(size)) => {
                unread(format!("a binary file of {size} bytes"))
            }
            Err(Unread::Io(err)) => Err(format!("cannot read {shown}: {err}")),
        },
    }
}

/// [`existing_text`] as the disk has it.
fn existing_text_on_disk(located: &Located, shown: &str) -> Result<Option<Before>, String> {
    match located.open_file() {
        Err(OpenError::NotFound) => Ok(None),
        Err(OpenError::HardLinked(links)) => unread(format!("a file with {links} hard links")),
        Err(OpenError::NotRegular) => Err(format!("{shown} is not a regular file")),
        Err(err) => Err(err.message(shown)),
        Ok(opened) => match read_text(opened) {
            Ok(text) => Ok(Some(Before {
                said: format!("{} bytes", text.len()),
                text,
                read: true,
            })),
            Err(Unread::TooLarge(size)) => unread(format!("a file of {}", human_size(size))),
            Err(Unread::Binary(size)) => unread(format!("a binary file of {size} bytes")),
            Err(Unread::NotUtf8(size)) => unread(format!("a non-UTF-8 file of {size} bytes")),
            Err(Unread::Io(err)) => Err(format!("cannot read {shown}: {err}")),
        },
    }
}

/// The `write_file` tool.
pub struct WriteFileTool;

struct PlannedWrite {
    located: Located,
    shown: String,
    before: Option<Before>,
}

impl PlannedWrite {
    /// Whether the editor may write it: a new file or a text file; one replaced unread
    /// (hard links, binary, too large) is replaced on the disk by a file of its own.
    fn for_the_editor(&self) -> bool {
        self.before.as_ref().is_none_or(|before| before.read)
    }
}

async fn plan_write(workspace: &Workspace, path: &str) -> Result<PlannedWrite, String> {
    let located = workspace.locate(path, Access::Write)?;
    let shown = workspace.display(located.path());
    let before = existing_text(workspace, &located, &shown).await?;
    Ok(PlannedWrite {
        located,
        shown,
        before,
    })
}

/// Writes `content` to the file planned as `located` (the model named it `path`):
/// through the editor when the workspace has one that holds the file and `for_the_editor`,
/// else atomically on the disk. Before the editor is handed the write, the path is
/// resolved and checked again (still the same file, not grown a hard link, no protected
/// folder on the way, its folders made): the editor opens it after these checks, which
/// therefore cannot be atomic with its write.
async fn put(
    workspace: &Workspace,
    path: &str,
    located: &mut Located,
    for_the_editor: bool,
    content: &str,
    shown: &str,
) -> Result<(), String> {
    let editor = for_the_editor
        .then(|| workspace.client_files_for(located.path()))
        .flatten();
    let Some(editor) = editor else {
        return located
            .write_atomic(content.as_bytes())
            .map_err(|err| format!("cannot write {shown}: {err}"));
    };
    let mut again = workspace.locate(path, Access::Write)?;
    if again.path() != located.path() {
        return Err(format!(
            "{shown} now leads to {}; nothing was written",
            again.path().display()
        ));
    }
    match again.open_file() {
        Ok(_) | Err(OpenError::NotFound) => {}
        Err(err) => return Err(format!("nothing was written: {}", err.message(shown))),
    }
    again
        .prepare_write()
        .map_err(|err| format!("cannot write {shown}: {err}"))?;
    editor
        .write_text(again.path(), content.to_string())
        .await
        .map_err(|err| format!("cannot write {shown}: {err}"))
}

impl super::TypedTool for WriteFileTool {
    type Args = WriteArgs;

    fn name(&self) -> &str {
        "write_file"
    }

    fn description(&self) -> &str {
        "Write a whole file in the workspace, creating parent folders as needed; an existing file \
         is replaced. Prefer edit_file for changing part of a file."
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::WritesFiles
    }

    fn changed_paths(&self, args: &WriteArgs) -> Vec<String> {
        vec![args.path.clone()]
    }

    /// The path as written: the permission rules read it from the workspace root.
    fn rule_subject(&self, args: &WriteArgs) -> Option<String> {
        Some(args.path.clone())
    }

    fn locations(&self, args: &WriteArgs, workspace: &Workspace) -> Vec<Location> {
        workspace.location(&args.path, None).into_iter().collect()
    }

    fn approval_request<'a>(
        &'a self,
        args: &'a WriteArgs,
        workspace: &'a Workspace,
    ) -> BoxFuture<'a, Result<Option<ApprovalRequest>, super::InvalidCall>> {
        Box::pin(async move {
            let plan = plan_write(workspace, &args.path).await?;
            let content = &args.content;
            let diff = unified_diff(
                plan.before.as_ref().map_or("", |before| before.text.as_str()),
                content,
                &plan.shown,
                DIFF_CONTEXT,
            );
            let what = match plan.before {
                None => format!("create {} ({} bytes)", plan.shown, content.len()),
                Some(_) if diff.is_empty() => format!("rewrite {} unchanged", plan.shown),
                Some(_) => format!("replace {} ({} bytes)", plan.shown, content.len()),
            };
            Ok(Some(ApprovalRequest::Edit {
                change: Before::old_text(plan.before.as_ref()).and_then(|old| text_change(old, content)),
                abs_path: plan.located.path().display().to_string(),
                path: plan.shown,
                summary: what,
                diff: cap_diff(&diff, content),
            }))
        })
    }

    fn run(&self, args: WriteArgs, context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        Box::pin(async move {
            let workspace = &context.workspace;
            let mut plan = match plan_write(workspace, &args.path).await {
                Ok(plan) => plan,
                Err(message) => return ToolOutput::error(message),
            };
            let content = &args.content;
            let change = Before::old_text(plan.before.as_ref()).and_then(|old| text_change(old, content));
            let for_the_editor = plan.for_the_editor();
            let written = put(
                workspace,
                &args.path,
                &mut plan.located,
                for_the_editor,
                content,
                &plan.shown,
            )
            .await;
            match written {
                Ok(()) => ToolOutput::ok(match plan.before {
                    None => format!("wrote {} bytes to {} (new file)", content.len(), plan.shown),
                    Some(before) => format!(
                        "wrote {} bytes to {} (replaced {})",
                        content.len(),
                        plan.shown,
                        before.said
                    ),
                })
                .changing(change),
                Err(message) => ToolOutput::error(message),
            }
        })
    }
}

/// The `edit_file` tool.
pub struct EditFileTool;

struct PlannedEdit {
    located: Located,
    shown: String,
    before: String,
    after: String,
    replaced: usize,
    diff: String,
}

/// Why edit_file does not edit a file whose text was not read.
fn not_editable(shown: &str, why: Unread) -> String {
    match why {
        Unread::TooLarge(size) => format!(
            "{shown} is {}; edit_file edits files up to {}. Change it with bash instead (sed -i, or a script that streams it)",
            human_size(size),
            human_size(MAX_EDIT_BYTES)
        ),
        Unread::Binary(size) => {
            format!("{shown} is a binary file ({size} bytes); edit_file edits text files only")
        }
        Unread::NotUtf8(_) => format!("{shown} is not UTF-8 text; edit_file edits text files only"),
        Unread::Io(err) => format!("cannot read {shown}: {err}"),
    }
}

/// The edit `args` asks for, on the file's text: the disk's, or the editor's when the
/// workspace has one that holds it ([`client_files`]), so the match and the diff are
/// made on what the person sees.
async fn plan_edit(workspace: &Workspace, args: &EditArgs) -> Result<PlannedEdit, String> {
    let located = workspace.locate(&args.path, Access::Write)?;
    let shown = workspace.display(located.path());
    let (old, new) = (args.old_str.as_str(), args.new_str.as_str());
    let replace_all = args.replace_all.unwrap_or(false);
    if old.is_empty() {
        return Err("`old_str` is empty; to create or overwrite a whole file use write_file".to_string());
    }
    if old == new {
        return Err("`old_str` and `new_str` are the same; nothing to change".to_string());
    }
    let opened = match located.open_file() {
        Ok(opened) => opened,
        Err(OpenError::NotFound) => {
            return Err(format!("file not found: {shown}; use write_file to create it"));
        }
        // Reading a FIFO would wait for a writer forever, and a device may never end.
        Err(OpenError::NotRegular) => {
            return Err(format!(
                "{shown} is not a regular file (a device, pipe or socket); edit_file edits files only"
            ));
        }
        Err(err) => return Err(err.message(&shown)),
    };
    let on_disk = read_text(opened).map_err(|why| not_editable(&shown, why))?;
    let before = match client_files::read(workspace, located.path()).await {
        ClientText::Disk => on_disk,
        ClientText::NotFound => return Err(format!("file not found: {shown}; use write_file to create it")),
        ClientText::Text(text) => checked(text).map_err(|why| not_editable(&shown, why))?,
    };
    let starts: Vec<usize> = before.match_indices(old).map(|(at, _)| at).collect();
    match starts.len() {
        0 => {
            return Err(format!(
                "`old_str` was not found in {shown}; nothing was changed. It must match exactly, \
                 including whitespace and indentation: read the file again and copy the text."
            ));
        }
        1 => {}
        count if !replace_all => {
            return Err(format!(
                "`old_str` matches {count} times in {shown} (lines {}); nothing was changed. \
                 Include more surrounding text to make it unique, or set replace_all to true.",
                match_lines(&before, &starts)
            ));
        }
        _ => {}
    }
    let after = before.replace(old, new);
    let diff = unified_diff(&before, &after, &shown, DIFF_CONTEXT);
    Ok(PlannedEdit {
        located,
        shown,
        before,
        after,
        replaced: starts.len(),
        diff,
    })
}

impl super::TypedTool for EditFileTool {
    type Args = EditArgs;

    fn name(&self) -> &str {
        "edit_file"
    }

    fn description(&self) -> &str {
        "Replace text in a file of the workspace. `old_str` must match the file exactly (whitespace \
         included) and exactly once, unless replace_all is true. The result shows the diff."
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::WritesFiles
    }

    fn changed_paths(&self, args: &EditArgs) -> Vec<String> {
        vec![args.path.clone()]
    }

    /// The path as written: the permission rules read it from the workspace root.
    fn rule_subject(&self, args: &EditArgs) -> Option<String> {
        Some(args.path.clone())
    }

    /// The file only: its changed line would mean reading it before the call is approved.
    fn locations(&self, args: &EditArgs, workspace: &Workspace) -> Vec<Location> {
        workspace.location(&args.path, None).into_iter().collect()
    }

    fn approval_request<'a>(
        &'a self,
        args: &'a EditArgs,
        workspace: &'a Workspace,
    ) -> BoxFuture<'a, Result<Option<ApprovalRequest>, super::InvalidCall>> {
        Box::pin(async move {
            let plan = plan_edit(workspace, args).await?;
            Ok(Some(ApprovalRequest::Edit {
                summary: format!(
                    "edit {} ({} replacement{})",
                    plan.shown,
                    plan.replaced,
                    if plan.replaced == 1 { "" } else { "s" },
                ),
                diff: cap_diff(&plan.diff, &plan.after),
                abs_path: plan.located.path().display().to_string(),
                change: text_change(Some(&plan.before), &plan.after),
                path: plan.shown,
            }))
        })
    }

    fn run(&self, args: EditArgs, context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        Box::pin(async move {
            let workspace = &context.workspace;
            let mut plan = match plan_edit(workspace, &args).await {
                Ok(plan) => plan,
                Err(message) => return ToolOutput::error(message),
            };
            let written = put(
                workspace,
                &args.path,
                &mut plan.located,
                true,
                &plan.after,
                &plan.shown,
            )
            .await;
            if let Err(message) = written {
                return ToolOutput::error(message);
            }
            ToolOutput::ok(format!(
                "edited {}: {} replacement{}\n{}",
                plan.shown,
                plan.replaced,
                if plan.replaced == 1 { "" } else { "s" },
                cap_text(&plan.diff, DIFF_LIMIT)
            ))
            .changing(text_change(Some(&plan.before), &plan.after))
        })
    }
}

/// Most match lines named when `old_str` matches more than once.
const LISTED_MATCHES: usize = 20;

/// The lines the first [`LISTED_MATCHES`] of `starts` (ascending byte offsets in `text`)
/// are on, counted in one pass: a file with a million matches must not cost a million
/// scans from its start.
fn match_lines(text: &str, starts: &[usize]) -> String {
    let mut line = 1;
    let mut counted = 0;
    let mut listed: Vec<String> = Vec::new();
    for &at in starts.iter().take(LISTED_MATCHES) {
        line += memchr::memchr_iter(b'\n', &text.as_bytes()[counted..at]).count();
        counted = at;
        listed.push(line.to_string());
    }
    if starts.len() > LISTED_MATCHES {
        listed.push(format!("and {} more", starts.len() - LISTED_MATCHES));
    }
    listed.join(", ")
}

#[cfg(test)]
mod tests;
