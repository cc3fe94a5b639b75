//! The module structure keeps its layers: inside every crate of the workspace, the
//! modules under one parent never import each other in a cycle (at every depth: the
//! top-level modules of a crate, the files of a folder), so each part can be read, tested
//! and moved on its own. The check reads the sources: every `crate::`, `super::` and
//! `self::` path (in `use` trees and inline), resolved to the module file it names.
//! Test modules are left out (they may use anything).
//!
//! Across crates the compiler enforces the direction (`Cargo.toml` dependencies), and
//! this check keeps the dependencies themselves in line: every face (the workbench, and
//! the binary's `exec` and `sessions` commands in `src/`) reaches the core only through
//! `miniagent-api`, beside `miniagent-protocol` (the `Op`s and `Event`s) and
//! `miniagent-text`, a leaf of plain-text helpers with no agent knowledge. The binary
//! also depends on `miniagent-tui`, the face it launches.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One crate's modules: module path (`["agent", "turn"]`) to its source text.
type Modules = BTreeMap<Vec<String>, String>;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, at any depth.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out
}

/// Every module file under `src`, keyed by module path. `lib.rs`/`main.rs` is the root,
/// `a/mod.rs` and `a.rs` are `a`.
fn modules(src: &Path) -> Modules {
    let mut out = Modules::new();
    for path in rust_files(src) {
        let relative = path.strip_prefix(src).unwrap();
        let mut parts: Vec<String> = relative
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let file = parts.pop().unwrap();
        let stem = file.trim_end_matches(".rs");
        match stem {
            "lib" | "main" if parts.is_empty() => {}
            "mod" => {}
            _ => parts.push(stem.to_string()),
        }
        // Test modules and test data under src are not part of the layering.
        if parts
            .iter()
            .any(|p| p == "tests" || p == "snapshots" || p.ends_with("_tests"))
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        out.insert(parts, strip_tests(&text));
    }
    out
}

/// The text without `//` comments (doc comments name modules in prose).
fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text up to the first `#[cfg(test)]` item (test modules close the file).
fn strip_tests(text: &str) -> String {
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_string(),
        None => text.to_string(),
    }
}

/// Expands one `use` tree (`a::{b, c::{d, e}}`) into its paths.
fn expand_use(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand_use(p).into_iter().map(|rest| format!("{prefix}{rest}")))
        .collect()
}

/// Every path the text names that starts with `crate`, `super` or `self`.
fn paths(text: &str) -> Vec<String> {
    let text: &str = &strip_comments(text);
    let mut out = Vec::new();
    // `use` statements, which may hold trees.
    let mut rest = text;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        rest = &rest[at + 4..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let end = rest.find(';').unwrap_or(rest.len());
        let tree = &rest[..end];
        if tree.starts_with("crate") || tree.starts_with("super") || tree.starts_with("self") {
            out.extend(expand_use(tree));
        }
        rest = &rest[end..];
    }
    // Inline paths (`crate::session::load::tool_call(..)`).
    let bytes = text.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = text[from..].find(start) {
            let begin = from + at;
            from = begin + start.len();
            if begin > 0 && (bytes[begin - 1].is_ascii_alphanumeric() || bytes[begin - 1] == b'_') {
                continue;
            }
            let end = text[begin..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(text.len(), |e| begin + e);
            out.push(text[begin..end].trim_end_matches(':').to_string());
        }
    }
    out
}

/// The module a path from inside `module` names: the longest known module prefix.
fn resolve(module: &[String], path: &str, known: &Modules, root_aliases: &[&str]) -> Option<Vec<String>> {
    let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String> = match segments.first().copied() {
        Some("crate") => {
            segments.remove(0);
            // `use crate as tui;` makes `crate::tui::x` the crate's own `x`.
            if segments.first().is_some_and(|s| root_aliases.contains(s)) {
                segments.remove(0);
            }
            Vec::new()
        }
        Some("self") => {
            segments.remove(0);
            module.to_vec()
        }
        Some("super") => {
            let mut base = module.to_vec();
            while segments.first() == Some(&"super") {
                segments.remove(0);
                base.pop()?;
            }
            base
        }
        _ => return None,
    };
    let mut found = None;
    for segment in segments {
        base.push(segment.to_string());
        if known.contains_key(&base) {
            found = Some(base.clone());
        } else {
            break;
        }
    }
    found
}

/// Cycles among the children of every module, as lists of sibling names.
fn sibling_cycles(known: &Modules, root_aliases: &[&str]) -> Vec<String> {
    // Edges between whole subtrees: (parent, from child, to child).
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (module, text) in known {
        for path in paths(text) {
            let Some(target) = resolve(module, &path, known, root_aliases) else {
                continue;
            };
            // The deepest common ancestor decides which siblings the edge joins.
            let common = module.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common == module.len() || common == target.len() {
                continue; // a module and its own ancestor or descendant
            }
            let parent = module[..common].to_vec();
            edges
                .entry(parent)
                .or_default()
                .entry(module[common].clone())
                .or_default()
                .insert(target[common].clone());
        }
    }
    let mut cycles = Vec::new();
    for (parent, graph) in &edges {
        for cycle in find_cycles(graph) {
            let prefix = if parent.is_empty() {
                String::new()
            } else {
                format!("{}::", parent.join("::"))
            };
            cycles.push(
                cycle
                    .iter()
                    .map(|m| format!("{prefix}{m}"))
                    .collect::<Vec<_>>()
                    .join(" -> "),
            );
        }
    }
    cycles
}

/// One cycle through each strongly connected group of more than one node.
fn find_cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut reported: BTreeSet<String> = BTreeSet::new();
    let mut cycles = Vec::new();
    for start in graph.keys() {
        if reported.contains(start) {
            continue;
        }
        // Breadth-first from `start` back to `start`, keeping the first path found.
        let mut previous: BTreeMap<&String, &String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut closing = None;
        while let Some(node) = queue.pop_front() {
            for next in graph.get(node).into_iter().flatten() {
                if next == start {
                    closing = Some(node);
                    break;
                }
                if !previous.contains_key(next) {
                    previous.insert(next, node);
                    queue.push_back(next);
                }
            }
            if closing.is_some() {
                break;
            }
        }
        if let Some(mut node) = closing {
            let mut cycle = vec![start.clone()];
            let mut back = vec![node.clone()];
            while node != start {
                node = previous[node];
                if node != start {
                    back.push(node.clone());
                }
            }
            back.reverse();
            cycle.extend(back);
            cycle.push(start.clone());
            reported.extend(cycle.iter().cloned());
            cycles.push(cycle);
        }
    }
    cycles
}

/// The crates each crate may depend on (normal dependencies, this workspace's only).
/// A front end reaches the core through `miniagent-api` alone, so naming anything of
/// the core beyond the start API fails to compile; this keeps that door from being
/// widened by adding `miniagent-core` to a front end.
const ALLOWED_DEPENDENCIES: &[(&str, &[&str])] = &[
    (
        ".",
        &[
            "miniagent-acp",
            "miniagent-api",
            "miniagent-protocol",
            "miniagent-serve",
            "miniagent-text",
            "miniagent-tui",
        ],
    ),
    ("crates/protocol", &[]),
    ("crates/text", &[]),
    ("crates/core", &["miniagent-protocol", "miniagent-text"]),
    ("crates/api", &["miniagent-core"]),
    (
        "crates/tui",
        &["miniagent-api", "miniagent-protocol", "miniagent-text"],
    ),
    // The ACP face: it may name text too when it needs it, like the workbench.
    ("crates/acp", &["miniagent-api", "miniagent-protocol"]),
    // The HTTP face.
    (
        "crates/serve",
        &["miniagent-api", "miniagent-protocol", "miniagent-text"],
    ),
];

/// The crates named under `[dependencies]` in a `Cargo.toml`, sorted.
fn dependencies(manifest: &str) -> Vec<String> {
    let mut in_dependencies = false;
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        if in_dependencies && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', ' ', '.']).next().unwrap_or_default();
            found.push(name.to_string());
        }
    }
    found.sort();
    found
}

/// The workspace crates named under `[dependencies]` in a `Cargo.toml`.
fn workspace_dependencies(manifest: &str) -> Vec<String> {
    dependencies(manifest)
        .into_iter()
        .filter(|name| name.starts_with("miniagent"))
        .collect()
}

/// Crates a front end must not depend on: it makes no HTTP calls of its own (the core
/// probes local model servers and talks to providers).
const FRONT_END_REFUSED: &[(&str, &[&str])] = &[
    ("crates/tui", &["reqwest"]),
    ("crates/acp", &["reqwest"]),
    ("crates/serve", &["reqwest", "miniagent-core"]),
    (".", &["reqwest"]),
];

#[test]
fn crates_depend_only_downwards_and_front_ends_only_on_the_api() {
    let root = workspace();
    for (folder, allowed) in ALLOWED_DEPENDENCIES {
        let manifest = std::fs::read_to_string(root.join(folder).join("Cargo.toml")).unwrap();
        let found = workspace_dependencies(&manifest);
        let mut allowed: Vec<String> = allowed.iter().map(|name| name.to_string()).collect();
        allowed.sort();
        assert_eq!(found, allowed, "{folder}/Cargo.toml");
    }
    for (folder, refused) in FRONT_END_REFUSED {
        let manifest = std::fs::read_to_string(root.join(folder).join("Cargo.toml")).unwrap();
        let found = dependencies(&manifest);
        for name in *refused {
            assert!(
                !found.contains(&name.to_string()),
                "{folder}/Cargo.toml depends on {name}"
            );
        }
    }
    assert_eq!(
        workspace_dependencies(
            "[dependencies]\nminiagent-core = { path = \"../core\" }\nserde = \"1\"\n[dev-dependencies]\nminiagent-x = \"1\"\n"
        ),
        vec!["miniagent-core".to_string()]
    );
    assert_eq!(
        dependencies(
            "[dependencies]\n# why\nreqwest = { workspace = true }\nminiagent-api.path = \"../api\"\n\n[features]\nx = []\n"
        ),
        vec!["miniagent-api".to_string(), "reqwest".to_string()]
    );
}

/// The binary's sources name no core module: `src/` (the faces `exec` and `sessions`, the
/// supervisor, the command line) goes through `miniagent_api` like the workbench, so
/// the door is the same for every face. Comments may name the core; code may not.
#[test]
fn the_binary_names_no_core_module() {
    let root = workspace();
    let mut found = Vec::new();
    // Every file, tests too (`lib.rs` and `main.rs` are both the root module, so
    // `modules` would keep only one of them).
    let files = rust_files(&root.join("src"));
    for path in &files {
        let code = strip_comments(&std::fs::read_to_string(path).unwrap());
        for (number, line) in code.lines().enumerate() {
            if line.contains("miniagent_core") {
                let file = path.strip_prefix(&root).unwrap().display().to_string();
                found.push(format!("{file}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    let files = files.len();
    assert!(files >= 4, "only {files} files read under src/");
    assert_eq!(found, Vec::<String>::new());
    assert_eq!(
        strip_comments("use miniagent_api; // not miniagent_core\n//! miniagent_core in prose"),
        "use miniagent_api; \n"
    );
}

#[test]
fn no_crate_has_a_module_cycle() {
    let root = workspace();
    let mut crates = vec![(root.join("src"), Vec::new())];
    let name = |src: &Path| {
        let dir = src.parent().unwrap();
        if dir == root {
            "miniagent".to_string()
        } else {
            dir.file_name().unwrap().to_string_lossy().into_owned()
        }
    };
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        // The workbench names its own root `tui` (it was a module before the split).
        let aliases = if dir.ends_with("tui") {
            vec!["tui"]
        } else {
            Vec::new()
        };
        crates.push((dir.join("src"), aliases));
    }
    let mut found = BTreeSet::new();
    for (src, aliases) in &crates {
        let known = modules(src);
        assert!(!known.is_empty(), "no modules read under {}", src.display());
        for cycle in sibling_cycles(&known, aliases) {
            found.insert(format!("{}: {cycle}", name(src)));
        }
    }
    // None is allowed: the last ones (the workbench's app with its key and command tables
    // and its layers) were broken in issue 17.
    assert!(
        found.is_empty(),
        "module cycles:\n{}",
        found.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_check_finds_a_cycle_and_resolves_trees() {
    let mut known = Modules::new();
    known.insert(vec![], String::new());
    known.insert(vec!["a".into()], "use crate::{b::{X, Y}, c};".into());
    known.insert(vec!["b".into()], "fn f() { super::a::g(); }".into());
    known.insert(vec!["c".into()], "use crate::d;".into());
    known.insert(
        vec!["d".into()],
        "// crate::c in a comment is not a use\nfn g() {}".into(),
    );
    let cycles = sibling_cycles(&known, &[]);
    assert_eq!(cycles, vec!["a -> b -> a".to_string()]);
    known.insert(vec!["d".into()], "use crate::c::Z;".into());
    assert_eq!(
        sibling_cycles(&known, &[]),
        vec!["a -> b -> a".to_string(), "c -> d -> c".to_string()]
    );
    assert_eq!(
        expand_use("crate::{b::{X, Y}, c}"),
        vec!["crate::b::X", "crate::b::Y", "crate::c"]
    );
}
