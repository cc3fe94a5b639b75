//! Large results stay out of the prompt. A tool result longer than
//! `tools.large_result_bytes` is saved whole in the session's results folder (readable by
//! `read_file` and `bash`, written by no tool), and the model receives its first and last
//! lines, its size, the file's path and how to read the rest. A command's output is
//! written there as it runs once it outgrows what is kept in memory, so every byte of
//! it can be read back, up to [`MAX_SAVED_BYTES`].

use std::io::Write;
use std::path::{Path, PathBuf};

/// Bytes of a saved result's beginning the model receives.
pub const PREVIEW_HEAD_BYTES: usize = 1024;
/// Bytes of a saved result's end the model receives.
pub const PREVIEW_TAIL_BYTES: usize = 1024;
/// The most of one command's output kept on disk from its start; past it, only the last
/// [`SAVED_TAIL_BYTES`] are kept (where a command says how it ended), the rest counted.
pub const MAX_SAVED_BYTES: u64 = 64 << 20;
/// The end of an output longer than [`MAX_SAVED_BYTES`] that is kept all the same.
pub const SAVED_TAIL_BYTES: usize = 64 << 10;

/// Where one call keeps what does not fit in memory: the store and the call's id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaveTarget {
    pub store: ResultStore,
    pub call_id: String,
}

/// The folder a session's large results are saved in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultStore {
    dir: PathBuf,
}

impl ResultStore {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where call `id`'s result goes (`suffix` tells several files of one call apart).
    /// The name keeps only the characters a call id is made of.
    pub fn path_for(&self, id: &str, suffix: &str) -> PathBuf {
        let name: String = id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .take(64)
            .collect();
        let name = if name.is_empty() { "call".to_string() } else { name };
        self.dir.join(format!("{name}{suffix}.txt"))
    }

    /// Creates the folder (this user's only) and a new file for call `id`: never one
    /// that exists (a resumed session's earlier run may have used the id), so a path a
    /// preview gave always holds what it said.
    pub fn create(&self, id: &str, suffix: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
        use std::os::unix::fs::OpenOptionsExt;
        crate::config::private_dir(&self.dir)?;
        let mut attempt = 1;
        loop {
            let path = match attempt {
                1 => self.path_for(id, suffix),
                n => self.path_for(id, &format!("{suffix}-{n}")),
            };
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(file) => return Ok((path, file)),
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists && attempt < 1000 => attempt += 1,
                Err(err) => return Err(err),
            }
        }
    }

    /// Saves `text` as call `id`'s whole result.
    pub fn save(&self, id: &str, suffix: &str, text: &str) -> std::io::Result<PathBuf> {
        let (path, mut file) = self.create(id, suffix)?;
        file.write_all(text.as_bytes())?;
        Ok(path)
    }
}

/// A command's output as its tool saved it: the file, and how many bytes of the output
/// were counted but not kept (past [`MAX_SAVED_BYTES`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedOutput {
    pub path: PathBuf,
    pub not_kept: u64,
}

/// A command's output kept whole on disk once it outgrows what is kept in memory: the
/// bytes up to `limit` wait in memory; past it, they and everything after go to the
/// call's file, up to [`MAX_SAVED_BYTES`].
#[derive(Debug)]
pub struct SpillWriter {
    target: SaveTarget,
    limit: usize,
    pending: Vec<u8>,
    file: Option<(PathBuf, std::fs::File)>,
    written: u64,
    /// Bytes past [`MAX_SAVED_BYTES`], the last [`SAVED_TAIL_BYTES`] of them in `tail`.
    dropped: u64,
    tail: std::collections::VecDeque<u8>,
    /// The file could not be written: the output is only cut, as without a store.
    failed: bool,
}

impl SpillWriter {
    pub fn new(target: SaveTarget, limit: usize) -> Self {
        Self {
            target,
            limit,
            pending: Vec::new(),
            file: None,
            written: 0,
            dropped: 0,
            tail: std::collections::VecDeque::new(),
            failed: false,
        }
    }

    /// The file the output goes to, once it outgrew memory (and while it can be written).
    pub fn path(&self) -> Option<&Path> {
        match (&self.file, self.failed) {
            (Some((path, _)), false) => Some(path),
            _ => None,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if self.failed {
            return;
        }
        if self.file.is_none() {
            if self.pending.len() + bytes.len() <= self.limit {
                self.pending.extend_from_slice(bytes);
                return;
            }
            match self.target.store.create(&self.target.call_id, "") {
                Ok(opened) => self.file = Some(opened),
                Err(_) => {
                    self.failed = true;
                    self.pending = Vec::new();
                    return;
                }
            }
            let pending = std::mem::take(&mut self.pending);
            self.write(&pending);
        }
        self.write(bytes);
    }

    fn write(&mut self, bytes: &[u8]) {
        let room = usize::try_from(MAX_SAVED_BYTES.saturating_sub(self.written)).unwrap_or(usize::MAX);
        let kept = &bytes[..bytes.len().min(room)];
        let past = &bytes[kept.len()..];
        self.dropped += past.len() as u64;
        self.tail.extend(past);
        let excess = self.tail.len().saturating_sub(SAVED_TAIL_BYTES);
        self.tail.drain(..excess);
        if let Some((_, file)) = self.file.as_mut() {
            if file.write_all(kept).is_err() {
                self.failed = true;
                return;
            }
            self.written += kept.len() as u64;
        }
    }

    /// Ends the output with `trailer` (what else the model is told: errors, the exit
    /// code); returns the file holding all of it, or `None` when it fit in memory.
    pub fn finish(mut self, trailer: &str) -> Option<SavedOutput> {
        if self.failed {
            return None;
        }
        let mut not_kept = 0;
        if self.dropped > 0 {
            let tail: Vec<u8> = std::mem::take(&mut self.tail).into();
            not_kept = self.dropped - tail.len() as u64;
            let note = format!(
                "\n[… {} bytes of output not kept: a saved output holds its first {} MB and its last {} KB …]\n",
                self.dropped - tail.len() as u64,
                MAX_SAVED_BYTES >> 20,
                SAVED_TAIL_BYTES >> 10
            );
            self.write_unbounded(note.as_bytes());
            self.write_unbounded(&tail);
        }
        self.write_unbounded(trailer.as_bytes());
        let (path, file) = self.file.take()?;
        drop(file);
        (!self.failed).then_some(SavedOutput { path, not_kept })
    }

    fn write_unbounded(&mut self, bytes: &[u8]) {
        if let Some((_, file)) = self.file.as_mut()
            && file.write_all(bytes).is_err()
        {
            self.failed = true;
        }
    }
}

/// What the model receives in place of `text`, saved whole at `path`: a line saying how
/// large it is, where it is and how to read more, its first and last lines (cut at line
/// ends where one is near), and how much lies between.
pub fn preview(text: &str, path: &Path) -> String {
    let mut head_end = text.len().min(REGION_BYTES);
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len().saturating_sub(REGION_BYTES);
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let whole = Counted {
        bytes: text.len() as u64,
        lines: text.lines().count() as u64,
    };
    preview_of(&text[..head_end], &text[tail_start..], whole, 0, path)
}

/// How much of a text's start and end a preview is cut from.
const REGION_BYTES: usize = 2 * (PREVIEW_HEAD_BYTES + PREVIEW_TAIL_BYTES);

/// A text's size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counted {
    bytes: u64,
    lines: u64,
}

/// [`preview`] from the text's first and last few kilobytes, `start` and `end` (which
/// overlap, or are the whole text, when it is short), and its size.
fn preview_of(start: &str, end: &str, whole: Counted, not_kept: u64, path: &Path) -> String {
    let overlap =
        (start.len() + end.len()).saturating_sub(usize::try_from(whole.bytes).unwrap_or(usize::MAX));
    let joined;
    let (head, tail) = if overlap > 0 || start.len() as u64 == whole.bytes {
        // Short: all of it is here.
        joined = format!("{start}{}", end.get(overlap.min(end.len())..).unwrap_or_default());
        let text = joined.as_str();
        let head_end = cut_back(text, PREVIEW_HEAD_BYTES);
        let tail_start = cut_forward(text, text.len().saturating_sub(PREVIEW_TAIL_BYTES)).max(head_end);
        (&text[..head_end], &text[tail_start..])
    } else {
        (
            &start[..cut_back(start, PREVIEW_HEAD_BYTES)],
            &end[cut_forward(end, end.len().saturating_sub(PREVIEW_TAIL_BYTES))..],
        )
    };
    let hidden_bytes = whole.bytes.saturating_sub((head.len() + tail.len()) as u64);
    let shown_lines = (head.matches('\n').count() + tail.lines().count()) as u64;
    let hidden_lines = whole.lines.saturating_sub(shown_lines);
    let path = path.display();
    let lines = match whole.lines {
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    };
    let size = match not_kept {
        0 => format!(
            "the whole result is {} bytes, {lines}, too long for the context: it is saved in {path}",
            whole.bytes
        ),
        _ => format!(
            "the result was {} bytes, too long for the context: {} bytes, {lines} of it (its first {} MB and its last {} KB; the middle was not kept) are saved in {path}",
            whole.bytes + not_kept,
            whole.bytes,
            MAX_SAVED_BYTES >> 20,
            SAVED_TAIL_BYTES >> 10
        ),
    };
    // The path as a JSON string and as a shell word: a data folder may hold a quote
    // (`/home/o'brien`) or anything else.
    let json_path = serde_json::Value::String(path.to_string()).to_string();
    let shell_path = super::command_rule::shell_word(&path.to_string());
    let mut out = format!(
        "[{size}. \
Its first and last lines follow. Read the rest with read_file {{\"path\": {json_path}, \"offset\": LINE, \"limit\": LINES}}, \
or search it with bash: grep -n PATTERN {shell_path}]\n"
    );
    out.push_str(head);
    if hidden_bytes > 0 {
        if !head.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!(
            "[… {hidden_bytes} bytes, {hidden_lines} lines not shown: read them from the file …]\n"
        ));
    }
    out.push_str(tail);
    out
}

/// What [`rewrite`] made of a saved output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewritten {
    /// What the model receives in its place.
    pub preview: String,
    /// Its size as the model reads it.
    pub bytes: u64,
}

/// Rewrites the saved output through `clean` (what the model reads of a run of whole
/// lines), a run of lines of about 64 KB at a time, in bounded memory however large the
/// file is, and returns its [`preview`] and size. The file is written again only from
/// the first run `clean` changes: output with nothing to clean (most of it) is read
/// once and left as it is, not copied to a new file and renamed over the old one at
/// every step.
pub fn rewrite(saved: &SavedOutput, clean: impl Fn(&str) -> String) -> std::io::Result<Rewritten> {
    use std::io::Read;
    const RUN_BYTES: usize = 64 << 10;
    let path = saved.path.as_path();
    let mut file = std::fs::File::open(path)?;
    let part = path.with_extension("part");
    let mut out: Option<std::io::BufWriter<std::fs::File>> = None;
    // Bytes of the file in the runs before this one.
    let mut done: u64 = 0;
    let mut start = String::new();
    let mut end: std::collections::VecDeque<u8> = std::collections::VecDeque::new();
    let mut whole = Counted::default();
    let mut buffer: Vec<u8> = Vec::with_capacity(2 * RUN_BYTES);
    let mut at_end = false;
    loop {
        // Whole lines up to about RUN_BYTES (a longer line whole): up to the first line
        // end at or past RUN_BYTES.
        // Each byte is looked at once, however long the line (a 64 MB one is saved whole).
        let mut searched = RUN_BYTES - 1;
        let cut = loop {
            if let Some(newline) = buffer
                .get(searched..)
                .and_then(|rest| memchr::memchr(b'\n', rest))
            {
                break searched + newline + 1;
            }
            searched = searched.max(buffer.len());
            if at_end {
                break buffer.len();
            }
            let filled = buffer.len();
            buffer.resize(filled + RUN_BYTES, 0);
            let read = file.read(&mut buffer[filled..])?;
            buffer.truncate(filled + read);
            at_end = read == 0;
        };
        if cut == 0 {
            break;
        }
        let run = &buffer[..cut];
        let cleaned = clean(&String::from_utf8_lossy(run));
        if out.is_none() && cleaned.as_bytes() != run {
            // The first change: what came before it is copied as it is.
            use std::os::unix::fs::OpenOptionsExt;
            let mut writer = std::io::BufWriter::new(
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o600)
                    .open(&part)?,
            );
            std::io::copy(&mut std::fs::File::open(path)?.take(done), &mut writer)?;
            out = Some(writer);
        }
        if let Some(writer) = out.as_mut() {
            writer.write_all(cleaned.as_bytes())?;
        }
        done += cut as u64;
        whole.bytes += cleaned.len() as u64;
        whole.lines += memchr::memchr_iter(b'\n', cleaned.as_bytes()).count() as u64;
        if start.len() < REGION_BYTES {
            let mut take = (REGION_BYTES - start.len()).min(cleaned.len());
            while !cleaned.is_char_boundary(take) {
                take -= 1;
            }
            start.push_str(&cleaned[..take]);
        }
        let from = cleaned.len().saturating_sub(REGION_BYTES);
        end.extend(&cleaned.as_bytes()[from..]);
        let excess = end.len().saturating_sub(REGION_BYTES);
        end.drain(..excess);
        if !cleaned.ends_with('\n') && !cleaned.is_empty() {
            // The text's last line, without a newline: `lines` counts it too.
            whole.lines += 1;
        }
        buffer.drain(..cut);
    }
    if let Some(mut writer) = out {
        writer.flush()?;
        drop(writer);
        std::fs::rename(&part, path)?;
    }
    let mut end: Vec<u8> = end.into();
    // The region may begin inside a character: start it at the next one.
    let first = end.iter().position(|b| (*b as i8) >= -0x40).unwrap_or(end.len());
    end.drain(..first);
    let end = String::from_utf8_lossy(&end);
    Ok(Rewritten {
        preview: preview_of(&start, &end, whole, saved.not_kept, path),
        bytes: whole.bytes,
    })
}

/// The end of a head of at most `limit` bytes: after the last newline in it when there is
/// one in its second half, else at a character boundary.
fn cut_back(text: &str, limit: usize) -> usize {
    if text.len() <= limit {
        return text.len();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(newline) if newline + 1 >= end / 2 => newline + 1,
        _ => end,
    }
}

/// The start of a tail beginning at or after `from`: after the first newline when there
/// is one in the tail's first half, else at a character boundary.
fn cut_forward(text: &str, from: usize) -> usize {
    let mut start = from.min(text.len());
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let half = (text.len() - start) / 2;
    match text[start..].find('\n') {
        Some(newline) if newline < half => start + newline + 1,
        _ => start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preview_keeps_whole_first_and_last_lines_and_says_where_the_rest_is() {
        let text: String = (1..=20_000).map(|n| format!("{n}\n")).collect();
        let shown = preview(&text, Path::new("/data/results/s/call_1.txt"));
        assert!(
            shown.len() < PREVIEW_HEAD_BYTES + PREVIEW_TAIL_BYTES + 600,
            "{}",
            shown.len()
        );
        assert!(shown.starts_with(&format!(
            "[the whole result is {} bytes, 20000 lines, too long for the context: it is saved in /data/results/s/call_1.txt.",
            text.len()
        )));
        assert!(shown.contains("\n1\n2\n3\n"), "the first lines");
        assert!(shown.ends_with("19999\n20000\n"), "the last lines");
        assert!(shown.contains("lines not shown: read them from the file …]\n"));
        // No line is cut in two.
        for line in shown.lines().skip(1).filter(|l| !l.starts_with('[')) {
            assert!(line.parse::<u32>().is_ok(), "{line:?}");
        }
        assert!(shown.contains("read_file {\"path\": \"/data/results/s/call_1.txt\", \"offset\": LINE"));
        assert!(shown.contains("grep -n PATTERN /data/results/s/call_1.txt]"));
        // A folder with a quote, a dollar or a backslash in its name stays one JSON string
        // and one shell word.
        let odd = Path::new("/home/o'brien/da\\ta $(touch x)/results/s/call_1.txt");
        let shown = preview(&text, odd);
        assert!(
            shown.contains(
                r#"read_file {"path": "/home/o'brien/da\\ta $(touch x)/results/s/call_1.txt", "offset""#
            ),
            "{shown}"
        );
        assert!(
            shown.contains(r#"grep -n PATTERN '/home/o'\''brien/da\ta $(touch x)/results/s/call_1.txt']"#),
            "{shown}"
        );
    }

    #[test]
    fn a_preview_of_one_long_line_cuts_at_character_boundaries() {
        let text = "é".repeat(5_000);
        let shown = preview(&text, Path::new("/r/x.txt"));
        assert!(shown.contains("bytes, 0 lines not shown") || shown.contains("lines not shown"));
        assert!(shown.len() < 3_000);
    }

    /// Output with nothing to clean stays the file it was (before, every step copied
    /// it to a new file and renamed that over it); a change past the first run is
    /// written with everything before it.
    #[test]
    fn a_file_is_written_again_only_from_what_cleaning_changes() {
        use std::os::unix::fs::MetadataExt;
        let dir = std::env::temp_dir().join(format!("miniagent-rewrite-same-{}", std::process::id()));
        let store = ResultStore::new(dir.clone());
        let plain: String = (1..=20_000).map(|n| format!("{n}\n")).collect();
        let path = store.save("same", "", &plain).unwrap();
        let inode = std::fs::metadata(&path).unwrap().ino();
        let saved = SavedOutput {
            path: path.clone(),
            not_kept: 0,
        };
        let shown = rewrite(&saved, |lines| lines.replace("\u{1b}[1m", "")).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), plain);
        assert_eq!(shown.preview, preview(&plain, &path));
        assert!(!path.with_extension("part").exists());

        let late = format!("{plain}\u{1b}[1mbold\n");
        std::fs::write(&path, &late).unwrap();
        let shown = rewrite(&saved, |lines| lines.replace("\u{1b}[1m", "")).unwrap();
        let expected = format!("{plain}bold\n");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
        assert_eq!(shown.preview, preview(&expected, &path));
        assert_eq!(shown.bytes, expected.len() as u64);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_rewritten_file_previews_as_the_text_it_holds() {
        let dir = std::env::temp_dir().join(format!("miniagent-rewrite-{}", std::process::id()));
        let store = ResultStore::new(dir.clone());
        for text in [
            (1..=20_000).map(|n| format!("{n}\n")).collect::<String>(),
            (1..=20_000).map(|n| format!("é{n}\n")).collect::<String>() + "no newline at the end",
            "short\ntext".to_string(),
            "x".repeat(5_000),
        ] {
            let path = store.save("r", "", &text.replace('1', "\u{1b}[1m1")).unwrap();
            let saved = SavedOutput {
                path: path.clone(),
                not_kept: 0,
            };
            let shown = rewrite(&saved, |line| line.replace("\u{1b}[1m", "")).unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
            assert_eq!(shown.preview, preview(&text, &path));
            assert_eq!(shown.bytes, text.len() as u64);
            std::fs::remove_file(path).unwrap();
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_file_is_never_written_over() {
        let dir = std::env::temp_dir().join(format!("miniagent-spill-{}", std::process::id()));
        let store = ResultStore::new(dir.clone());
        let first = store.save("call_1", "", "first").unwrap();
        let second = store.save("call_1", "", "second").unwrap();
        assert_eq!(first, dir.join("call_1.txt"));
        assert_eq!(second, dir.join("call_1-2.txt"));
        assert_eq!(std::fs::read_to_string(&first).unwrap(), "first");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn file_names_keep_only_what_a_call_id_is_made_of() {
        let store = ResultStore::new(PathBuf::from("/r"));
        assert_eq!(store.path_for("call_1", ""), PathBuf::from("/r/call_1.txt"));
        assert_eq!(
            store.path_for("../../etc/passwd", ".stderr"),
            PathBuf::from("/r/etcpasswd.stderr.txt")
        );
        assert_eq!(store.path_for("/", ""), PathBuf::from("/r/call.txt"));
    }
}
