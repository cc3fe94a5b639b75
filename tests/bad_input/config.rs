//! Bad configuration, through the binary (`miniagent exec -c FILE`): every key with a
//! wrong type, unknown sections, unreadable files and a missing system prompt file each
//! end with exit code 1 and one line naming the file and the key.

use std::path::Path;

use pretty_assertions::assert_eq;

use crate::support::TempDir;
use crate::support::cli::{miniagent, text};

/// Runs `miniagent exec -c FILE hi` and returns (exit code, stderr).
fn exec_with_config(home: &TempDir, config: &Path) -> (Option<i32>, String) {
    let workspace = TempDir::new();
    let output = miniagent(home)
        .arg("--workspace")
        .arg(workspace.path())
        .arg("exec")
        .arg("-c")
        .arg(config)
        .arg("hi")
        .output()
        .expect("miniagent runs");
    (output.status.code(), text(&output.stderr))
}

/// Asserts the run failed with exit code 1 and one line that names all of `names`.
#[track_caller]
fn assert_config_refused(outcome: &(Option<i32>, String), names: &[&str]) {
    let (code, stderr) = outcome;
    assert_eq!(*code, Some(1), "exit code; stderr: {stderr}");
    let line = stderr.trim_end();
    assert!(!line.contains('\n'), "one line: {stderr:?}");
    for name in names {
        assert!(line.contains(name), "{line:?} names {name:?}");
    }
}

/// Every key of the built-in config, as the names of the tables it is in and its own,
/// with its default value (a name may hold a dot: `prices."gpt-4.1"`).
fn config_keys() -> Vec<(Vec<String>, toml::Value)> {
    fn walk(table: &toml::Table, prefix: &[String], out: &mut Vec<(Vec<String>, toml::Value)>) {
        for (key, value) in table {
            let mut path = prefix.to_vec();
            path.push(key.clone());
            match value {
                toml::Value::Table(inner) => walk(inner, &path, out),
                other => out.push((path, other.clone())),
            }
        }
    }
    let defaults: toml::Table = include_str!("../../config/default.toml")
        .parse()
        .expect("the built-in config is TOML");
    let mut keys = Vec::new();
    walk(&defaults, &[], &mut keys);
    keys
}

/// A value of another type than `value`.
fn wrong_type(value: &toml::Value) -> toml::Value {
    match value {
        toml::Value::String(_) => toml::Value::Integer(7),
        toml::Value::Integer(_) => toml::Value::String("seven".into()),
        toml::Value::Float(_) => toml::Value::String("two".into()),
        toml::Value::Boolean(_) => toml::Value::String("yes".into()),
        toml::Value::Array(_) => toml::Value::Integer(3),
        toml::Value::Datetime(_) | toml::Value::Table(_) => toml::Value::Boolean(true),
    }
}

/// A TOML document setting only the key at `path` to `value`.
fn config_setting(path: &[String], value: toml::Value) -> String {
    let (last, parts) = path.split_last().expect("a key has a name");
    let mut table = toml::Table::new();
    table.insert(last.clone(), value);
    for part in parts.iter().rev() {
        let mut outer = toml::Table::new();
        outer.insert(part.clone(), toml::Value::Table(table));
        table = outer;
    }
    toml::to_string(&table).expect("a table serializes")
}

#[test]
fn every_key_with_a_wrong_type() {
    let home = TempDir::new();
    let keys = config_keys();
    assert!(keys.len() > 20, "{keys:?}");
    for (path, default) in keys {
        let key = path.join(".");
        // A wrong scalar, and a table where a value belongs.
        let mut table = toml::Table::new();
        table.insert("nested".into(), toml::Value::Integer(1));
        for value in [wrong_type(&default), toml::Value::Table(table)] {
            let file = home.write("wrong.toml", config_setting(&path, value.clone()));
            let outcome = exec_with_config(&home, &file);
            let shown = file.display().to_string();
            assert_config_refused(&outcome, &[&shown, &format!("key `{key}`"), "expected "]);
            // A wrong type is named as such, never as an unknown choice.
            assert!(!outcome.1.contains("variant"), "{key} = {value}: {}", outcome.1);
        }
    }
}

#[test]
fn unknown_sections() {
    let home = TempDir::new();
    for (document, key) in [
        ("[nonsense]\nvalue = 1\n", "`nonsense`"),
        ("[model.extra]\nvalue = 1\n", "`model.extra`"),
        ("[model]\nmodle = \"typo\"\n", "`model.modle`"),
        ("top_level = true\n", "`top_level`"),
    ] {
        let file = home.write("unknown.toml", document);
        let outcome = exec_with_config(&home, &file);
        let shown = file.display().to_string();
        assert_config_refused(&outcome, &[&shown, &format!("unknown key {key}")]);
    }
    // A known section of the wrong type names the section.
    let file = home.write("section.toml", "model = 5\n");
    let outcome = exec_with_config(&home, &file);
    assert_config_refused(&outcome, &[&file.display().to_string(), "key `model`"]);
}

#[test]
fn an_unreadable_config_file() {
    let home = TempDir::new();
    // A folder given as the file cannot be read, whoever runs the test.
    let folder = home.join("config-folder.toml");
    std::fs::create_dir_all(&folder).expect("folder");
    let outcome = exec_with_config(&home, &folder);
    assert_config_refused(
        &outcome,
        &[&folder.display().to_string(), "cannot read the config file"],
    );
    let missing = home.join("missing.toml");
    let outcome = exec_with_config(&home, &missing);
    assert_config_refused(
        &outcome,
        &[&missing.display().to_string(), "cannot read the config file"],
    );
    let not_utf8 = home.write("latin1.toml", b"[model]\nmodel = \"caf\xe9\"\n");
    let outcome = exec_with_config(&home, &not_utf8);
    assert_config_refused(
        &outcome,
        &[&not_utf8.display().to_string(), "cannot read the config file"],
    );
    // Permission bits do not stop root, who reads anything.
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!("skipped the chmod 000 variant: running as root, which can read any file");
        return;
    }
    let locked = home.write("locked.toml", "[model]\nmodel = \"m\"\n");
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o000)).expect("chmod");
    let outcome = exec_with_config(&home, &locked);
    assert_config_refused(
        &outcome,
        &[&locked.display().to_string(), "cannot read the config file"],
    );
}

#[test]
fn a_missing_system_prompt_file() {
    let home = TempDir::new();
    let file = home.write(
        "prompt.toml",
        "[agent]\nsystem_prompt_file = \"no-such-prompt.md\"\n",
    );
    let outcome = exec_with_config(&home, &file);
    let expected = home.join("no-such-prompt.md").display().to_string();
    assert_config_refused(&outcome, &[&expected, "agent.system_prompt_file"]);
}
