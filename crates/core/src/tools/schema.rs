//! Checks tool arguments against the subset of JSON Schema tools declare: object
//! properties, `required`, `additionalProperties: false`, primitive types, `enum`, arrays
//! with `items`, and integer/number bounds. Errors name the offending field, on one line
//! the model can act on. Other keywords are ignored, never followed: an MCP server's
//! schema that refers to itself cannot loop, and the walk goes no deeper than the
//! arguments do.
//!
//! Kept hand-written after measuring `jsonschema` 0.61 with default features off (a
//! probe crate on this machine, release build): it brings 27 crates miniagent does not
//! build today and a third `fancy-regex`, about 135 s of CPU of the probe's 227 s (the
//! `jsonschema` crate alone is the slowest unit), and grows a release binary by 6.6 MB
//! (0.55 to 7.15 MB). It would also start enforcing what servers declare loosely
//! (`pattern`, `format`, `oneOf`, `$ref`), refusing calls that work today, with errors
//! written for schema authors. What the tools declare fits in this page.

use serde_json::Value;

/// Validates `value` against `schema`; the error names the field and what was wrong.
pub fn validate(schema: &Value, value: &Value) -> Result<(), super::InvalidCall> {
    check(schema, value, "").map_err(super::InvalidCall)
}

fn field_name(path: &str) -> String {
    if path.is_empty() {
        "the arguments".to_string()
    } else {
        format!("`{path}`")
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(expected: &str, value: &Value) -> bool {
    match expected {
        "integer" => value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn check(schema: &Value, value: &Value, path: &str) -> Result<(), String> {
    match schema.get("type") {
        Some(Value::String(expected)) if !type_matches(expected, value) => {
            return Err(format!(
                "{} must be {} {expected}, got {}",
                field_name(path),
                article(expected),
                kind(value)
            ));
        }
        Some(Value::Array(options)) => {
            let names: Vec<&str> = options.iter().filter_map(Value::as_str).collect();
            if !names.iter().any(|name| type_matches(name, value)) {
                return Err(format!(
                    "{} must be one of {}, got {}",
                    field_name(path),
                    names.join(", "),
                    kind(value)
                ));
            }
        }
        _ => {}
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        return Err(format!(
            "{} must be one of {}, got {}",
            field_name(path),
            listing(allowed.iter().map(Value::to_string)),
            short(&value.to_string())
        ));
    }
    if let Some(number) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && number < min
        {
            return Err(format!(
                "{} must be at least {min}, got {value}",
                field_name(path)
            ));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && number > max
        {
            return Err(format!("{} must be at most {max}, got {value}", field_name(path)));
        }
    }
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            if let Some(Value::Array(required)) = schema.get("required") {
                for name in required.iter().filter_map(Value::as_str) {
                    if !map.contains_key(name) {
                        return Err(format!(
                            "missing required field {}",
                            field_name(&join(path, name))
                        ));
                    }
                }
            }
            for (name, field) in map {
                let field_path = join(path, name);
                match properties.and_then(|p| p.get(name)) {
                    Some(field_schema) => check(field_schema, field, &field_path)?,
                    None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                        let mut known: Vec<&str> = properties
                            .map(|p| p.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        known.sort_unstable();
                        return Err(format!(
                            "unknown field {} (expected: {})",
                            field_name(&field_path),
                            listing(known.into_iter().map(str::to_string))
                        ));
                    }
                    None => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter().enumerate() {
                    check(item_schema, item, &format!("{path}[{index}]"))?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// How many allowed values or known fields an error names before saying how many more
/// there are, and how many characters of each: a server's schema may list thousands, and
/// the error is one line for the model.
const MAX_LISTED: usize = 20;
const MAX_SHOWN_CHARS: usize = 40;

/// `items` joined by commas, at most [`MAX_LISTED`] of them.
fn listing(items: impl ExactSizeIterator<Item = String>) -> String {
    let total = items.len();
    let mut shown: Vec<String> = items.take(MAX_LISTED).map(|item| short(&item)).collect();
    if total > MAX_LISTED {
        shown.push(format!("… ({} more)", total - MAX_LISTED));
    }
    shown.join(", ")
}

/// `text` on one line and at most [`MAX_SHOWN_CHARS`] long.
fn short(text: &str) -> String {
    let mut out: String = text
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_SHOWN_CHARS)
        .collect();
    if text
        .chars()
        .filter(|c| !c.is_control())
        .nth(MAX_SHOWN_CHARS)
        .is_some()
    {
        out.push('…');
    }
    out
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "timeout": {"type": "integer", "minimum": 1, "maximum": 600},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "paths": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["command"],
            "additionalProperties": false,
        })
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (json!({}), "missing required field `command`"),
            (json!({"command": 5}), "`command` must be a string, got integer"),
            (
                json!({"command": "ls", "timeout": "10"}),
                "`timeout` must be an integer, got string",
            ),
            (
                json!({"command": "ls", "timeout": 0}),
                "`timeout` must be at least 1, got 0",
            ),
            (
                json!({"command": "ls", "mode": "c"}),
                "`mode` must be one of \"a\", \"b\", got \"c\"",
            ),
            (
                json!({"command": "ls", "paths": ["x", 1]}),
                "`paths[1]` must be a string, got integer",
            ),
            (
                json!({"command": "ls", "colour": true}),
                "unknown field `colour` (expected: command, mode, paths, timeout)",
            ),
            (json!("ls"), "the arguments must be an object, got string"),
        ];
        for (value, expected) in cases {
            assert_eq!(validate(&schema(), &value).unwrap_err().0, expected, "{value}");
        }
        assert_eq!(
            validate(&schema(), &json!({"command": "ls", "timeout": 5, "paths": []})),
            Ok(())
        );
    }

    /// MCP servers declare their own schemas: one that refers to itself, lists a huge
    /// `enum` or a huge set of properties must neither hang the check nor make the error
    /// the model reads a page long.
    #[test]
    fn hostile_schemas_stay_quick_and_their_errors_short() {
        let looping = json!({
            "$ref": "#",
            "type": "object",
            "properties": {"a": {"$ref": "#", "items": {"$ref": "#"}}},
        });
        let mut deep = json!("x");
        for _ in 0..100 {
            deep = json!({"a": deep});
        }
        assert_eq!(validate(&looping, &deep), Ok(()));

        let huge_enum = json!({"enum": (0..100_000).collect::<Vec<_>>()});
        let error = validate(&huge_enum, &json!(-1)).unwrap_err().0;
        assert!(
            error.starts_with("the arguments must be one of 0, 1, 2,"),
            "{error}"
        );
        assert!(error.len() < 300 && error.contains("99980 more"), "{error}");

        let properties: serde_json::Map<String, Value> =
            (0..100_000).map(|n| (format!("p{n:05}"), json!({}))).collect();
        let closed = json!({"type": "object", "properties": properties, "additionalProperties": false});
        let error = validate(&closed, &json!({"colour": 1})).unwrap_err().0;
        assert!(
            error.starts_with("unknown field `colour` (expected: p00000, p00001,"),
            "{error}"
        );
        assert!(error.len() < 300 && error.contains("99980 more"), "{error}");
        assert!(!error.contains('\n'));
    }
}
