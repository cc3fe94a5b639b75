//! Changing the user's `config.toml` from the workbench: one setting (`/theme`), or a
//! list (`[permissions]`, from `A` at an approval and `/approvals`), keeping the person's
//! comments, order and layout. The edit is a line edit (no crate here keeps a TOML
//! document's formatting), so it is checked: the result must parse, say the new value,
//! and hold every other setting unchanged, or the file is left alone.

use std::path::Path;

use toml::{Table, Value};

/// Sets `[table] key = value` in `<config_dir>/config.toml`, creating the file (and the
/// folder) when missing. Returns the file written.
pub fn set_value(
    config_dir: &Path,
    table: &str,
    key: &str,
    value: &str,
) -> Result<std::path::PathBuf, EditError> {
    let path = config_dir.join("config.toml");
    let (original, before) = read_table(&path)?;
    let setting = Value::String(value.to_string());
    let cannot = || cannot_edit(&path, table, key, value);
    write_checked(&path, &original, before, (table, key), setting, cannot)?;
    Ok(path)
}

/// Changes the list `[table] key` in the config file `path` (the user's `config.toml`)
/// with `change`, keeping the rest of the file as it is; the list is written one item a
/// line. Returns whether `change` changed it (when not, the file is not touched).
pub fn change_list(
    path: &Path,
    table: &str,
    key: &str,
    change: impl FnOnce(&mut Vec<String>),
) -> Result<bool, EditError> {
    let (original, before) = read_table(path)?;
    let not_a_list = || {
        EditError(format!(
            "`{key}` under `[{table}]` in {} is not a list of strings",
            path.display()
        ))
    };
    let mut items: Vec<String> = match before.get(table).and_then(|section| section.get(key)) {
        None => Vec::new(),
        Some(Value::Array(values)) => values
            .iter()
            .map(|value| value.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(not_a_list)?,
        Some(_) => return Err(not_a_list()),
    };
    let unchanged = items.clone();
    change(&mut items);
    if items == unchanged {
        return Ok(false);
    }
    let list = Value::Array(items.into_iter().map(Value::String).collect());
    let cannot = || {
        EditError(format!(
            "cannot change {} safely; set `{key}` under `[{table}]` yourself",
            path.display()
        ))
    };
    write_checked(path, &original, before, (table, key), list, cannot)?;
    Ok(true)
}

/// The config file at `path` (empty when missing) and what it says.
fn read_table(path: &Path) -> Result<(String, Table), EditError> {
    let original = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(EditError(format!("cannot read {}: {err}", path.display()))),
    };
    let before: Table = toml::from_str(&original)
        .map_err(|err| EditError(format!("{} does not parse: {}", path.display(), err.message())))?;
    Ok((original, before))
}

/// Writes `original` (which says `before`) with `[table] key = value`, once the edited
/// text is checked to parse, say `value` there and hold every other setting unchanged;
/// else the file is left alone and the error is `cannot`'s.
fn write_checked(
    path: &Path,
    original: &str,
    before: Table,
    (table, key): (&str, &str),
    value: Value,
    cannot: impl Fn() -> EditError,
) -> Result<(), EditError> {
    let edited = with_value(original, table, key, &rendered(&value));
    let after: Table = toml::from_str(&edited).map_err(|_| cannot())?;
    let mut expected = before;
    let Value::Table(section) = expected
        .entry(table.to_string())
        .or_insert_with(|| Value::Table(Table::new()))
    else {
        return Err(cannot());
    };
    section.insert(key.to_string(), value);
    if after != expected {
        return Err(cannot());
    }
    write_replacing(path, &edited)
}

/// `value` as written in the file: a list one item a line.
fn rendered(value: &Value) -> String {
    match value {
        Value::Array(items) if items.is_empty() => "[]".to_string(),
        Value::Array(items) => format!(
            "[\n{}]",
            items
                .iter()
                .map(|item| format!("    {item},\n"))
                .collect::<String>()
        ),
        other => other.to_string(),
    }
}

/// Writes `text` beside `path` and renames it over it: a crash leaves the old file or
/// the new one.
fn write_replacing(path: &Path, text: &str) -> Result<(), EditError> {
    let folder = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder)
        .map_err(|err| EditError(format!("cannot create {}: {err}", folder.display())))?;
    let temporary = folder.join(".config.toml.new");
    std::fs::write(&temporary, text)
        .map_err(|err| EditError(format!("cannot write {}: {err}", temporary.display())))?;
    std::fs::rename(&temporary, path)
        .map_err(|err| EditError(format!("cannot replace {}: {err}", path.display())))
}

/// Why a setting could not be saved in the config file (one line, for a notice).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct EditError(String);

fn cannot_edit(path: &Path, table: &str, key: &str, value: &str) -> EditError {
    EditError(format!(
        "cannot change {} safely; add `{key} = \"{value}\"` under `[{table}]` yourself",
        path.display()
    ))
}

/// `text` with `key = value` in `[table]`: the key's line replaced, else a line added
/// under the table's header, else the table added at the end.
fn with_value(text: &str, table: &str, key: &str, value: &str) -> String {
    let header = format!("[{table}]");
    let setting = format!("{key} = {value}\n");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let is_header = |line: &str| line.split('#').next().unwrap_or("").trim() == header;
    let Some(start) = lines.iter().position(|line| is_header(line)) else {
        let mut out = text.to_string();
        if !out.is_empty() {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push('\n');
        }
        out.push_str(&header);
        out.push('\n');
        out.push_str(&setting);
        return out;
    };
    let end = lines[start + 1..]
        .iter()
        .position(|line| line.trim_start().starts_with('['))
        .map_or(lines.len(), |offset| start + 1 + offset);
    let sets_key = |line: &str| {
        line.trim_start()
            .strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with('='))
    };
    let mut out: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
    match (start + 1..end).find(|&index| sets_key(lines[index])) {
        Some(index) => {
            // A value may go on over lines (a list): up to the first line that ends it.
            let last = (index..end)
                .find(|&last| toml::from_str::<Table>(&lines[index..=last].concat()).is_ok())
                .unwrap_or(index);
            out.splice(index..=last, [setting]);
        }
        None => {
            if !out[start].ends_with('\n') {
                out[start].push('\n');
            }
            out.insert(start + 1, setting);
        }
    }
    out.concat()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_line_is_replaced_added_or_its_table_created() {
        let value = "\"light\"";
        assert_eq!(
            with_value(
                "[ui]\ntheme = \"dark\" # mine\nshow_thinking = true\n",
                "ui",
                "theme",
                value
            ),
            "[ui]\ntheme = \"light\"\nshow_thinking = true\n"
        );
        assert_eq!(
            with_value("[ui] # look\n\n[agent]\nmax_steps = 3", "ui", "theme", value),
            "[ui] # look\ntheme = \"light\"\n\n[agent]\nmax_steps = 3"
        );
        assert_eq!(
            with_value("[agent]\nmax_steps = 3", "ui", "theme", value),
            "[agent]\nmax_steps = 3\n\n[ui]\ntheme = \"light\"\n"
        );
        assert_eq!(with_value("", "ui", "theme", value), "[ui]\ntheme = \"light\"\n");
        // `themes` is another key.
        assert_eq!(
            with_value("[ui]\nthemes = 1\n", "ui", "theme", value),
            "[ui]\ntheme = \"light\"\nthemes = 1\n"
        );
    }

    #[test]
    fn a_list_is_added_to_and_taken_from_keeping_the_rest_of_the_file() {
        let dir = std::env::temp_dir().join(format!("miniagent-edit-list-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.toml");
        let original = "# mine\n[permissions]\n# kept\nallow = [\n  \"bash(ls*)\", # this one\n]\ndeny = [\"bash(rm*)\"]\n\n[ui]\ntheme = \"light\"\n";
        std::fs::write(&path, original).unwrap();
        let added = change_list(&path, "permissions", "allow", |list| {
            list.push("bash(cargo test *)".into())
        });
        assert_eq!(added.unwrap(), true);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# mine\n[permissions]\n# kept\nallow = [\n    \"bash(ls*)\",\n    \"bash(cargo test *)\",\n]\ndeny = [\"bash(rm*)\"]\n\n[ui]\ntheme = \"light\"\n"
        );
        let same = change_list(&path, "permissions", "deny", |list| {
            list.retain(|item| item != "nothing")
        });
        assert_eq!(same.unwrap(), false);
        let removed = change_list(&path, "permissions", "deny", |list| {
            list.retain(|item| item != "bash(rm*)")
        });
        assert_eq!(removed.unwrap(), true);
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .contains("\ndeny = []\n\n[ui]\n")
        );
        // A file without the table gets it at the end; a missing file is created.
        std::fs::remove_file(&path).unwrap();
        change_list(&path, "permissions", "allow", |list| {
            list.push("write_file(src/**)".into())
        })
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[permissions]\nallow = [\n    \"write_file(src/**)\",\n]\n"
        );
        // What is not a list of strings is left alone.
        std::fs::write(&path, "[permissions]\nallow = 3\n").unwrap();
        assert!(change_list(&path, "permissions", "allow", |list| list.push("x".into())).is_err());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[permissions]\nallow = 3\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_layout_the_line_edit_cannot_handle_is_left_alone() {
        let dir = std::env::temp_dir().join(format!("miniagent-edit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A dotted key outside `[ui]`: adding `[ui]` would define the table twice.
        let original = "ui.theme = \"dark\"\n";
        std::fs::write(dir.join("config.toml"), original).unwrap();
        let err = set_value(&dir, "ui", "theme", "light").unwrap_err();
        assert!(
            err.to_string()
                .contains("add `theme = \"light\"` under `[ui]` yourself"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("config.toml")).unwrap(),
            original
        );
        // A quote in the name is written as TOML escapes it.
        std::fs::write(dir.join("config.toml"), "[ui]\n").unwrap();
        set_value(&dir, "ui", "theme", "my\"theme").unwrap();
        let table: Table =
            toml::from_str(&std::fs::read_to_string(dir.join("config.toml")).unwrap()).unwrap();
        assert_eq!(table["ui"]["theme"].as_str(), Some("my\"theme"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
