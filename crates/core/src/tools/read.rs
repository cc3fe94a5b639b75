//! `read_file {path, offset?, limit?, column?}`: numbered lines of a text file, or a
//! folder's entries. Reads as a stream and stops at the limit: memory is bounded by what
//! is returned, whatever the file's size. A line longer than [`MAX_LINE_BYTES`] is cut
//! and read on by byte column; a NUL byte or a hole (a sparse file) means binary.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::client_files::{self, ClientText};
use super::paths::{Access, EntryDetail, Kind, Located, OpenError, OpenedFile, Workspace};
use super::{ResultText, ToolContext, ToolEffect, ToolOutput};
use crate::tokens::{Encoding, TokenCounter};
use miniagent_protocol::Location;

/// Entries a folder listing shows before summarising the rest.
const MAX_ENTRIES: usize = 500;
/// Bytes of one line shown at a time; the rest is read with `column`.
const MAX_LINE_BYTES: u64 = 4000;
/// The read buffer: how much of a file is in memory at once besides the kept lines.
const READ_BUFFER: usize = 64 * 1024;

/// The `read_file` tool.
pub struct ReadFileTool {
    max_tokens: u64,
    encoding: Encoding,
}

impl ReadFileTool {
    pub fn new(max_tokens: u64, encoding: Encoding) -> Self {
        Self { max_tokens, encoding }
    }
}

/// `read_file`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// File path, relative to the workspace or absolute inside it.
    pub path: String,
    /// Line number to start at (1-based).
    #[serde(default, deserialize_with = "super::typed::whole_number")]
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// Number of lines to read.
    #[serde(default, deserialize_with = "super::typed::whole_number")]
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// Byte in the first line to start at (1-based), to read on in a line that was cut.
    #[serde(default, deserialize_with = "super::typed::whole_number")]
    #[schemars(range(min = 1))]
    pub column: Option<u64>,
}

impl super::TypedTool for ReadFileTool {
    type Args = ReadArgs;

    fn name(&self) -> &str {
        "read_file"
    }

    fn description(&self) -> &str {
        "Read a text file from the workspace. Lines come numbered as `     1|text`. Use offset \
         (first line, from 1) and limit (number of lines) to read part of a long file. A line \
         longer than 4000 bytes is cut, and a note after it gives the offset and column (byte \
         position in that line, from 1) to read on from. Reading stops at the limit. A folder \
         path lists its entries."
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::ReadOnly
    }

    /// The path as written: the permission rules read it from the workspace root.
    fn rule_subject(&self, args: &ReadArgs) -> Option<String> {
        Some(args.path.clone())
    }

    fn locations(&self, args: &ReadArgs, workspace: &Workspace) -> Vec<Location> {
        workspace.location(&args.path, args.offset).into_iter().collect()
    }

    fn result_text(&self) -> ResultText {
        ResultText::FileContent
    }

    fn run(&self, args: ReadArgs, context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        let max_tokens = self.max_tokens;
        let encoding = self.encoding;
        Box::pin(async move {
            let failed = |err: tokio::task::JoinError| ToolOutput::error(format!("read_file failed: {err}"));
            let window = Window::of(&args);
            let workspace = context.workspace.clone();
            // File reading (and the tokenizer's first load) blocks; keep it off the async workers.
            let found = match tokio::task::spawn_blocking(move || find(&workspace, &args)).await {
                Ok(Ok(found)) => found,
                Ok(Err(answer)) => return *answer,
                Err(err) => return failed(err),
            };
            // The disk said what the file is; the editor, when there is one, what it holds.
            let text = match client_files::read(&*context.workspace, &found.path).await {
                ClientText::Text(text) => Some(text),
                ClientText::NotFound => return ToolOutput::error(format!("file not found: {}", found.shown)),
                ClientText::Disk => None,
            };
            tokio::task::spawn_blocking(move || {
                let counter = TokenCounter::new(encoding);
                match text {
                    Some(text) => show(
                        text.as_bytes(),
                        text.len() as u64,
                        &found.shown,
                        &window,
                        max_tokens,
                        counter,
                    ),
                    None => show_file(found, &window, max_tokens, counter),
                }
            })
            .await
            .unwrap_or_else(failed)
        })
    }
}

/// Where reading starts and stops.
struct Window {
    offset: u64,
    /// 0-based byte in the first line.
    skip: u64,
    limit: Option<u64>,
}

impl Window {
    fn of(args: &ReadArgs) -> Self {
        Window {
            offset: args.offset.unwrap_or(1).max(1),
            skip: args.column.unwrap_or(1).max(1) - 1,
            limit: args.limit,
        }
    }
}

/// A regular file read_file will show, opened.
struct Found {
    /// Its real path.
    path: PathBuf,
    /// Its name for the model.
    shown: String,
    opened: OpenedFile,
}

/// The file `args` names, confined to the workspace, found a regular file and opened;
/// otherwise the answer (a folder's listing, a refusal, "file not found").
fn find(workspace: &Workspace, args: &ReadArgs) -> Result<Found, Box<ToolOutput>> {
    let answer = |output: ToolOutput| Err(Box::new(output));
    let located = match workspace.locate(&args.path, Access::Read) {
        Ok(located) => located,
        Err(message) => return answer(ToolOutput::error(message)),
    };
    let shown = workspace.display(located.path());
    let not_regular = || {
        ToolOutput::error(format!(
            "{shown} is not a regular file (a device, pipe or socket); read_file reads files only"
        ))
    };
    match located.kind() {
        Ok(None) => return answer(ToolOutput::error(format!("file not found: {shown}"))),
        Ok(Some(Kind::Folder)) => return answer(list_folder(&located, &shown)),
        Ok(Some(Kind::Other)) => return answer(not_regular()),
        Ok(Some(Kind::File | Kind::Symlink)) => {}
        Err(err) => return answer(ToolOutput::error(format!("cannot read {shown}: {err}"))),
    }
    let opened = match located.open_file() {
        Ok(opened) => opened,
        Err(OpenError::NotRegular) => return answer(not_regular()),
        Err(err) => return answer(ToolOutput::error(err.message(&shown))),
    };
    if has_hole(&opened.file, opened.size) {
        return answer(binary(&shown, opened.size));
    }
    Ok(Found {
        path: located.path().to_path_buf(),
        shown,
        opened,
    })
}

fn binary(shown: &str, size: u64) -> ToolOutput {
    ToolOutput::error(format!(
        "{shown} is a binary file ({size} bytes); read_file shows text only"
    ))
}

/// The found file's lines, read from the disk.
fn show_file(found: Found, window: &Window, max_tokens: u64, counter: TokenCounter) -> ToolOutput {
    let mut file = &found.opened.file;
    if let Err(err) = file.seek(SeekFrom::Start(0)) {
        return ToolOutput::error(format!("cannot read {}: {err}", found.shown));
    }
    show(file, found.opened.size, &found.shown, window, max_tokens, counter)
}

/// The lines of `text` (`size` bytes, from the disk or the editor) in `window`, as the
/// model gets them.
fn show(
    text: impl Read,
    size: u64,
    shown: &str,
    window: &Window,
    max_tokens: u64,
    counter: TokenCounter,
) -> ToolOutput {
    match read_lines(text, window, max_tokens, counter) {
        Ok(Lines::Binary) => binary(shown, size),
        Ok(Lines::Text(text)) if text.is_empty() && window.offset == 1 => {
            ToolOutput::ok(format!("{shown} is empty"))
        }
        Ok(Lines::PastEnd { total }) => ToolOutput::error(format!(
            "{shown} has {total} lines; offset {} is past the end",
            window.offset
        )),
        Ok(Lines::Text(text)) => ToolOutput::ok(text),
        Err(err) => ToolOutput::error(format!("cannot read {shown}: {err}")),
    }
}

/// Whether the file has a hole: a sparse file reads as NUL bytes there, so it is binary,
/// and this answers without reading it.
pub(super) fn has_hole(file: &File, size: u64) -> bool {
    if size == 0 {
        return false;
    }
    // SAFETY: plain call on an open descriptor; only the file position changes, and
    // reading starts with a seek of its own.
    let hole = unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_HOLE) };
    u64::try_from(hole).is_ok_and(|hole| hole < size)
}

enum Lines {
    Text(String),
    Binary,
    PastEnd { total: u64 },
}

/// One line as [`next_line`] saw it.
struct LineSeen {
    /// Whether the line goes on past the bytes kept.
    cut: bool,
    /// Whether it holds a NUL byte (reading stopped there).
    nul: bool,
}

/// Whether [`next_line`] reads a line to its end or may stop once the kept part is full.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LineEnd {
    ReadTo,
    StopWhenKept,
}

/// Reads the next line, keeping bytes `skip..skip + keep` of it in `kept` and only
/// scanning the rest (or, with [`LineEnd::StopWhenKept`], not even that); `None` at the
/// end of the file.
fn next_line(
    reader: &mut impl BufRead,
    skip: u64,
    keep: u64,
    end: LineEnd,
    kept: &mut Vec<u8>,
) -> std::io::Result<Option<LineSeen>> {
    kept.clear();
    let mut length = 0u64;
    let mut any = false;
    let keep_to = skip.saturating_add(keep);
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(any.then_some(LineSeen {
                cut: length > keep_to,
                nul: false,
            }));
        }
        any = true;
        // One pass finds the line's end or a NUL byte, whichever comes first.
        let (chunk, ends, nul) = match memchr::memchr2(b'\n', 0, buffer) {
            Some(at) if buffer[at] == 0 => (&buffer[..at], false, true),
            Some(at) => (&buffer[..at], true, false),
            None => (buffer, false, false),
        };
        let start = length;
        let chunk_end = start + chunk.len() as u64;
        let from = skip.max(start);
        let to = keep_to.min(chunk_end);
        if from < to {
            kept.extend_from_slice(&chunk[(from - start) as usize..(to - start) as usize]);
        }
        let used = chunk.len() + usize::from(ends);
        length = chunk_end;
        reader.consume(used);
        let cut = length > keep_to;
        if nul || ends || (cut && end == LineEnd::StopWhenKept) {
            return Ok(Some(LineSeen { cut, nul }));
        }
    }
}

/// `kept` shortened so it does not end inside a UTF-8 sequence.
fn cut_at_char_boundary(kept: &mut Vec<u8>) {
    let len = kept.len();
    let lead = (len.saturating_sub(4)..len)
        .rev()
        .find(|&i| kept[i] & 0xC0 != 0x80);
    if let Some(at) = lead {
        let needs = match kept[at] {
            byte if byte & 0x80 == 0 => 1,
            byte if byte & 0xE0 == 0xC0 => 2,
            byte if byte & 0xF0 == 0xE0 => 3,
            byte if byte & 0xF8 == 0xF0 => 4,
            _ => 1,
        };
        if at + needs > len {
            kept.truncate(at);
        }
    }
}

fn read_lines(
    text: impl Read,
    window: &Window,
    max_tokens: u64,
    counter: TokenCounter,
) -> std::io::Result<Lines> {
    let mut reader = BufReader::with_capacity(READ_BUFFER, text);

    // Half the budget for the first lines, half for the last; the middle is counted only.
    let half_budget = max_tokens / 2;
    let mut head: Vec<String> = Vec::new();
    let mut head_tokens = 0u64;
    let mut tail: VecDeque<(String, u64)> = VecDeque::new();
    let mut tail_tokens = 0u64;
    let mut cut_lines = 0u64;
    let mut cut_tokens = 0u64;
    let mut head_full = false;
    let mut lossy = false;

    let mut number = 0u64;
    let mut kept_lines = 0u64;
    let mut raw = Vec::new();
    loop {
        if window.limit.is_some_and(|limit| kept_lines >= limit) {
            break;
        }
        let wanted = number + 1 >= window.offset;
        let skip = if number + 1 == window.offset {
            window.skip
        } else {
            0
        };
        let keep = if wanted { MAX_LINE_BYTES } else { 0 };
        // The last line the limit allows need not be read past what is shown.
        let end = match window.limit {
            Some(limit) if wanted && kept_lines + 1 >= limit => LineEnd::StopWhenKept,
            _ => LineEnd::ReadTo,
        };
        let Some(seen) = next_line(&mut reader, skip, keep, end, &mut raw)? else {
            break;
        };
        if seen.nul {
            return Ok(Lines::Binary);
        }
        number += 1;
        if !wanted {
            continue;
        }
        kept_lines += 1;
        if seen.cut {
            cut_at_char_boundary(&mut raw);
        } else if raw.last() == Some(&b'\r') {
            raw.pop();
        }
        let read_on = skip + raw.len() as u64;
        let text = match std::str::from_utf8(&raw) {
            Ok(text) => text.to_string(),
            Err(_) => {
                lossy = true;
                String::from_utf8_lossy(&raw).into_owned()
            }
        };
        let mut line = format!("{number:>6}|{text}");
        if seen.cut {
            line.push_str(&format!(
                "\n[line {number} goes on past column {read_on}; to read on, use offset {number} and column {}]",
                read_on + 1
            ));
        }
        let tokens = counter.count(&line) + 1;
        if !head_full && head_tokens + tokens <= half_budget {
            head_tokens += tokens;
            head.push(line);
            continue;
        }
        head_full = true;
        tail_tokens += tokens;
        tail.push_back((line, tokens));
        while tail_tokens > half_budget {
            let Some((_, dropped)) = tail.pop_front() else {
                break;
            };
            tail_tokens -= dropped;
            cut_lines += 1;
            cut_tokens += dropped;
        }
    }
    if kept_lines == 0 && number > 0 && window.offset > number {
        return Ok(Lines::PastEnd { total: number });
    }
    let mut out = head.join("\n");
    if cut_lines > 0 {
        out.push_str(&format!(
            "\n[... {cut_lines} lines (about {cut_tokens} tokens) cut to stay within {max_tokens} tokens; read them with offset and limit ...]"
        ));
    }
    for (line, _) in tail {
        out.push('\n');
        out.push_str(&line);
    }
    if lossy {
        out.push_str("\n[note: the file is not valid UTF-8; invalid bytes are shown as \u{FFFD}]");
    }
    Ok(Lines::Text(out))
}

fn list_folder(located: &Located, shown: &str) -> ToolOutput {
    let entries = match located.list_folder() {
        Ok(entries) => entries,
        Err(err) => return ToolOutput::error(format!("cannot list {shown}: {err}")),
    };
    let mut rows: Vec<String> = entries
        .into_iter()
        .map(|entry| {
            let name = entry.name.to_string_lossy().into_owned();
            match (entry.kind, entry.detail) {
                (Some(Kind::Folder), _) => format!("{name}/"),
                (Some(Kind::Symlink), Some(EntryDetail::LinksTo(target))) => {
                    format!("{name} -> {}", target.display())
                }
                (Some(Kind::Symlink), _) => format!("{name} ->"),
                (_, Some(EntryDetail::Bytes(bytes))) => format!("{name} ({bytes} bytes)"),
                _ => name,
            }
        })
        .collect();
    rows.sort();
    let total = rows.len();
    if total == 0 {
        return ToolOutput::ok(format!("{shown} is an empty folder"));
    }
    rows.truncate(MAX_ENTRIES);
    let mut out = format!("{shown} is a folder with {total} entries:\n{}", rows.join("\n"));
    if total > MAX_ENTRIES {
        out.push_str(&format!("\n[... and {} more]", total - MAX_ENTRIES));
    }
    ToolOutput::ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};
    use std::path::Path;

    fn args(arguments: Value) -> ReadArgs {
        crate::tools::typed::read_args(&arguments).unwrap()
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("miniagent-read-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// What read_file answers, from the disk alone.
    fn read(workspace: &Workspace, args: &ReadArgs, max_tokens: u64, counter: TokenCounter) -> ToolOutput {
        match find(workspace, args) {
            Ok(found) => show_file(found, &Window::of(args), max_tokens, counter),
            Err(answer) => *answer,
        }
    }

    fn run(dir: &Path, arguments: Value, max_tokens: u64) -> ToolOutput {
        read(
            &Workspace::new(dir, &[]),
            &args(arguments),
            max_tokens,
            TokenCounter::new(Encoding::Cl100kBase),
        )
    }

    #[test]
    fn numbered_lines_with_offset_and_limit() {
        let dir = scratch("lines");
        std::fs::write(dir.join("a.txt"), "one\ntwo\r\nthree\nfour").unwrap();
        assert_eq!(
            run(&dir, json!({"path": "a.txt"}), 1000),
            ToolOutput::ok("     1|one\n     2|two\n     3|three\n     4|four")
        );
        assert_eq!(
            run(&dir, json!({"path": "a.txt", "offset": 2, "limit": 2}), 1000),
            ToolOutput::ok("     2|two\n     3|three")
        );
        assert_eq!(
            run(&dir, json!({"path": "a.txt", "offset": 9}), 1000),
            ToolOutput::error("a.txt has 4 lines; offset 9 is past the end")
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn long_files_keep_head_and_tail() {
        let dir = scratch("long");
        let text: String = (1..=2000).map(|n| format!("line {n}\n")).collect();
        std::fs::write(dir.join("long.txt"), text).unwrap();
        let out = run(&dir, json!({"path": "long.txt"}), 200);
        assert!(!out.is_error);
        assert!(
            out.content.starts_with("     1|line 1\n     2|line 2\n"),
            "{}",
            out.content
        );
        assert!(out.content.ends_with("  2000|line 2000"), "{}", out.content);
        assert!(out.content.contains("lines (about"), "{}", out.content);
        assert!(
            out.content
                .contains("cut to stay within 200 tokens; read them with offset and limit")
        );
        let tokens = TokenCounter::new(Encoding::Cl100kBase).count(&out.content);
        assert!(tokens < 260, "{tokens}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn binary_non_utf8_folders_and_devices() {
        let dir = scratch("kinds");
        std::fs::write(dir.join("bin"), b"\x7fELF\0\0\x01").unwrap();
        std::fs::write(dir.join("latin1.txt"), b"caf\xe9\n").unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        assert_eq!(
            run(&dir, json!({"path": "bin"}), 100),
            ToolOutput::error("bin is a binary file (7 bytes); read_file shows text only")
        );
        let out = run(&dir, json!({"path": "latin1.txt"}), 100);
        assert_eq!(
            out.content,
            "     1|caf\u{FFFD}\n[note: the file is not valid UTF-8; invalid bytes are shown as \u{FFFD}]"
        );
        assert_eq!(
            run(&dir, json!({"path": "."}), 100),
            ToolOutput::ok(". is a folder with 3 entries:\nbin (7 bytes)\nlatin1.txt (5 bytes)\nsub/")
        );
        assert_eq!(
            run(&dir, json!({"path": "nope"}), 100),
            ToolOutput::error("file not found: nope")
        );
        let ws = Workspace::new(&dir, &[std::path::PathBuf::from("/dev")]);
        let out = read(
            &ws,
            &args(json!({"path": "/dev/zero"})),
            100,
            TokenCounter::estimate_only(),
        );
        assert_eq!(
            out,
            ToolOutput::error(
                "/dev/zero is not a regular file (a device, pipe or socket); read_file reads files only"
            )
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
