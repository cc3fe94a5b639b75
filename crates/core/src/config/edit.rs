//! Changing one setting in the user's `config.toml` from the workbench (`/theme`),
//! keeping the person's comments, order and layout. The edit is a line edit (no crate
//! here keeps a TOML document's formatting), so it is checked: the result must parse, say
//! the new value, and hold every other setting unchanged, or the file is left alone.

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
    let original = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(EditError(format!("cannot read {}: {err}", path.display()))),
    };
    let before: Table = toml::from_str(&original)
        .map_err(|err| EditError(format!("{} does not parse: {}", path.display(), err.message())))?;
    let edited = with_value(
        &original,
        table,
        key,
        &Value::String(value.to_string()).to_string(),
    );
    let after: Table = toml::from_str(&edited).map_err(|_| cannot_edit(&path, table, key, value))?;
    let mut expected = before;
    if let Value::Table(section) = expected
        .entry(table.to_string())
        .or_insert_with(|| Value::Table(Table::new()))
    {
        section.insert(key.to_string(), Value::String(value.to_string()));
    } else {
        return Err(cannot_edit(&path, table, key, value));
    }
    if after != expected {
        return Err(cannot_edit(&path, table, key, value));
    }
    std::fs::create_dir_all(config_dir)
        .map_err(|err| EditError(format!("cannot create {}: {err}", config_dir.display())))?;
    // Written beside it and renamed over it: a crash leaves the old file or the new one.
    let temporary = config_dir.join(".config.toml.new");
    std::fs::write(&temporary, &edited)
        .map_err(|err| EditError(format!("cannot write {}: {err}", temporary.display())))?;
    std::fs::rename(&temporary, &path)
        .map_err(|err| EditError(format!("cannot replace {}: {err}", path.display())))?;
    Ok(path)
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
        Some(index) => out[index] = setting,
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
