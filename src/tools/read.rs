//! `read_file {path, offset?, limit?}`: numbered lines of a text file, or a folder's
//! entries. Reads line by line, so a huge file costs the kept lines only.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::paths::{Access, Workspace};
use super::{Tool, ToolContext, ToolEffect, ToolOutput};
use crate::agent::tokens::{Encoding, TokenCounter};

/// Entries a folder listing shows before summarising the rest.
const MAX_ENTRIES: usize = 500;
/// Bytes sniffed for NUL to tell binary files from text.
const SNIFF_BYTES: usize = 8192;

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

impl Tool for ReadFileTool {
    fn name(&self) -> &str {
        "read_file"
    }

    fn description(&self) -> &str {
        "Read a text file from the workspace. Lines come numbered as `     1|text`. Use offset \
         (first line, from 1) and limit (number of lines) to read part of a long file. A folder \
         path lists its entries."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace or absolute inside it."},
                "offset": {"type": "integer", "minimum": 1, "description": "Line number to start at (1-based)."},
                "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to read."},
            },
            "required": ["path"],
            "additionalProperties": false,
        })
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::ReadOnly
    }

    fn run(&self, arguments: Value, context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        let max_tokens = self.max_tokens;
        let encoding = self.encoding;
        Box::pin(async move {
            let workspace = context.workspace.clone();
            // File reading (and the tokenizer's first load) blocks; keep it off the async workers.
            tokio::task::spawn_blocking(move || {
                read(&workspace, &arguments, max_tokens, TokenCounter::new(encoding))
            })
            .await
            .unwrap_or_else(|err| ToolOutput::error(format!("read_file failed: {err}")))
        })
    }
}

fn read(workspace: &Workspace, arguments: &Value, max_tokens: u64, counter: TokenCounter) -> ToolOutput {
    let named = arguments.get("path").and_then(Value::as_str).unwrap_or("");
    let path = match workspace.resolve(named, Access::Read) {
        Ok(path) => path,
        Err(message) => return ToolOutput::error(message),
    };
    let shown = workspace.display(&path);
    let meta = match std::fs::metadata(&path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return ToolOutput::error(format!("file not found: {shown}"));
        }
        Err(err) => return ToolOutput::error(format!("cannot read {shown}: {err}")),
    };
    if meta.is_dir() {
        return list_folder(&path, &shown);
    }
    if !meta.is_file() {
        return ToolOutput::error(format!(
            "{shown} is not a regular file (a device, pipe or socket); read_file reads files only"
        ));
    }
    let offset = arguments
        .get("offset")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1);
    let limit = arguments.get("limit").and_then(Value::as_u64);
    match read_lines(&path, offset, limit, max_tokens, counter) {
        Ok(Lines::Binary) => ToolOutput::error(format!(
            "{shown} is a binary file ({} bytes); read_file shows text only",
            meta.len()
        )),
        Ok(Lines::Text(text)) if text.is_empty() && offset == 1 => {
            ToolOutput::ok(format!("{shown} is empty"))
        }
        Ok(Lines::PastEnd { total }) => ToolOutput::error(format!(
            "{shown} has {total} lines; offset {offset} is past the end"
        )),
        Ok(Lines::Text(text)) => ToolOutput::ok(text),
        Err(err) => ToolOutput::error(format!("cannot read {shown}: {err}")),
    }
}

enum Lines {
    Text(String),
    Binary,
    PastEnd { total: u64 },
}

fn read_lines(
    path: &Path,
    offset: u64,
    limit: Option<u64>,
    max_tokens: u64,
    counter: TokenCounter,
) -> std::io::Result<Lines> {
    let mut file = std::fs::File::open(path)?;
    let mut sniff = vec![0u8; SNIFF_BYTES];
    let sniffed = read_up_to(&mut file, &mut sniff)?;
    sniff.truncate(sniffed);
    if sniff.contains(&0) {
        return Ok(Lines::Binary);
    }
    let mut reader = BufReader::new(std::io::Cursor::new(sniff).chain(file));

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
    let mut kept = 0u64;
    let mut raw = Vec::new();
    loop {
        raw.clear();
        if reader.read_until(b'\n', &mut raw)? == 0 {
            break;
        }
        number += 1;
        if number < offset {
            continue;
        }
        if limit.is_some_and(|limit| kept >= limit) {
            continue;
        }
        kept += 1;
        while matches!(raw.last(), Some(b'\n' | b'\r')) {
            raw.pop();
        }
        let text = match std::str::from_utf8(&raw) {
            Ok(text) => text.to_string(),
            Err(_) => {
                lossy = true;
                String::from_utf8_lossy(&raw).into_owned()
            }
        };
        let line = format!("{number:>6}|{text}");
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
    if kept == 0 && number > 0 && offset > number {
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

fn read_up_to(file: &mut std::fs::File, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

fn list_folder(path: &Path, shown: &str) -> ToolOutput {
    let entries = match std::fs::read_dir(path) {
        Ok(entries) => entries,
        Err(err) => return ToolOutput::error(format!("cannot list {shown}: {err}")),
    };
    let mut rows: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => format!("{name}/"),
                Ok(kind) if kind.is_symlink() => match std::fs::read_link(entry.path()) {
                    Ok(target) => format!("{name} -> {}", target.display()),
                    Err(_) => format!("{name} ->"),
                },
                _ => match entry.metadata() {
                    Ok(meta) => format!("{name} ({} bytes)", meta.len()),
                    Err(_) => name,
                },
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

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("miniagent-read-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn run(dir: &Path, arguments: Value, max_tokens: u64) -> ToolOutput {
        read(
            &Workspace::new(dir, &[]),
            &arguments,
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
            &json!({"path": "/dev/zero"}),
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
