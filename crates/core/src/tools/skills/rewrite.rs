//! Making a skill's relative file references absolute, so the agent can read or run them
//! whatever its working folder is.

use std::path::{Component, Path, PathBuf};

/// Folders whose files a skill refers to by relative path.
const RESOURCE_FOLDERS: [&str; 3] = ["scripts/", "references/", "assets/"];
/// Document types a skill mentions by name (other guides, forms, notes).
const DOCUMENT_EXTENSIONS: [&str; 2] = ["md", "txt"];

/// Rewrites relative references in `body` to absolute paths under `root`: paths starting
/// with `scripts/`, `references/` or `assets/`, and mentions of `.md`/`.txt` files,
/// whether bare, in backticks, in quotes or as Markdown link targets. A path is rewritten
/// only when it names a file that exists in the skill folder, so mentions of the
/// person's own files (`README.md`) stay as written; URLs and absolute paths are left alone.
pub fn rewrite_paths(body: &str, root: &Path) -> String {
    let mut text = String::with_capacity(body.len());
    let mut previous: Option<char> = None;
    let mut at = 0;
    while let Some(c) = body[at..].chars().next() {
        // A path starts only after a separator, so `https://…/scripts/x` and `/abs/x.md`
        // are never entered midway.
        if is_path_char(c) && previous.is_none_or(is_separator) {
            let end = body[at..]
                .find(|c: char| !is_path_char(c))
                .map_or(body.len(), |offset| at + offset);
            let token = &body[at..end];
            // A sentence's full stop is not part of the path.
            let path = token.trim_end_matches('.');
            match resolve(path, root) {
                Some(absolute) => {
                    text.push_str(&absolute.display().to_string());
                    text.push_str(&token[path.len()..]);
                }
                None => text.push_str(token),
            }
            previous = token.chars().last();
            at = end;
            continue;
        }
        text.push(c);
        previous = Some(c);
        at += c.len_utf8();
    }
    text
}

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

fn is_separator(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '(' | '[' | '{' | '<' | '`' | '\'' | '"' | '=' | ',' | ';' | '*' | '|' | '>'
        )
}

/// The absolute path a relative mention names, if it is a skill file that exists.
fn resolve(mention: &str, root: &Path) -> Option<PathBuf> {
    let relative = mention.strip_prefix("./").unwrap_or(mention);
    // The skill's own SKILL.md is the text being returned; a mention of it names the
    // concept, and an absolute path there would only be noise.
    if relative.is_empty() || relative.starts_with('/') || relative == super::SKILL_FILE {
        return None;
    }
    let path = Path::new(relative);
    // `..` could point outside the skill; such a path is not the skill's to rewrite.
    if !path.components().all(|part| matches!(part, Component::Normal(_))) {
        return None;
    }
    let in_resource_folder = RESOURCE_FOLDERS.iter().any(|folder| relative.starts_with(folder));
    let is_document = path
        .extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| {
            DOCUMENT_EXTENSIONS
                .iter()
                .any(|known| extension.eq_ignore_ascii_case(known))
        });
    if !(in_resource_folder || is_document) {
        return None;
    }
    let absolute = root.join(path);
    // Folder mentions (`scripts/`) usually describe the layout rather than point at it.
    absolute.is_file().then_some(absolute)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn only_existing_relative_skill_files_are_rewritten() {
        let root = std::env::temp_dir().join(format!("miniagent-rewrite-{}", std::process::id()));
        std::fs::create_dir_all(root.join("scripts")).unwrap();
        std::fs::create_dir_all(root.join("references")).unwrap();
        std::fs::write(root.join("scripts/run.sh"), "").unwrap();
        std::fs::write(root.join("references/guide.md"), "").unwrap();
        std::fs::write(root.join("notes.txt"), "").unwrap();
        let body = "Run `bash scripts/run.sh`, then read [the guide](references/guide.md).\n\
                    See ./notes.txt and notes.txt. Not README.md, not scripts/missing.sh,\n\
                    not https://example.com/scripts/run.sh, not /etc/references/guide.md,\n\
                    not ../notes.txt, not myscripts/run.sh, not `references/`.";
        let r = root.display();
        assert_eq!(
            rewrite_paths(body, &root),
            format!(
                "Run `bash {r}/scripts/run.sh`, then read [the guide]({r}/references/guide.md).\n\
                 See {r}/notes.txt and {r}/notes.txt. Not README.md, not scripts/missing.sh,\n\
                 not https://example.com/scripts/run.sh, not /etc/references/guide.md,\n\
                 not ../notes.txt, not myscripts/run.sh, not `references/`."
            )
        );
        std::fs::remove_dir_all(root).unwrap();
    }
}
