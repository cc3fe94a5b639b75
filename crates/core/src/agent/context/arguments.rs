//! A call's large arguments leave the prompt once the call ran, the way large results do:
//! the model's own `write_file` of megabytes would otherwise go back to it with every
//! later request, more than any budget holds. Each string argument longer than the limit
//! becomes a stub saying its size and the saved file that holds it whole; arguments that
//! are large only together (thousands of short strings) become one stub for all of them.

use std::path::Path;

use serde_json::Value;

use super::{ContentBlock, ContextState};

/// Where a stubbed argument is kept: `save(ordinal, text)` stores the text as the call's
/// `ordinal`-th large argument and returns where it is, or `None` when it cannot be kept.
pub trait ArgumentStore {
    fn save(&mut self, ordinal: usize, text: &str) -> Option<std::path::PathBuf>;
}

impl<F: FnMut(usize, &str) -> Option<std::path::PathBuf>> ArgumentStore for F {
    fn save(&mut self, ordinal: usize, text: &str) -> Option<std::path::PathBuf> {
        self(ordinal, text)
    }
}

/// `input` with every string longer than `limit` bytes a stub (and, when what is left is
/// still longer than `limit`, the whole input one); `None` when nothing is that large.
pub fn stub_arguments(input: &Value, limit: usize, store: &mut impl ArgumentStore) -> Option<Value> {
    let (large, large_bytes, all_bytes) = measure(input, limit);
    // Most calls are small: no serializing them to know it (a JSON string is at most six
    // bytes a byte of text, and a few a value besides).
    if large == 0 && all_bytes.saturating_mul(6) <= limit {
        return None;
    }
    let whole = input.to_string();
    // What is left with every large string a stub (a few hundred bytes each, JSON-escaped
    // counted high): past the limit, one stub for all of it, and nothing else saved.
    let left = whole
        .len()
        .saturating_sub(large_bytes)
        .saturating_add(large.saturating_mul(STUB_BYTES));
    if whole.len() > limit && left > limit {
        let path = store.save(1, &whole);
        let mut fields = serde_json::Map::new();
        fields.insert(
            "arguments_omitted".to_string(),
            Value::String(argument_stub(&whole, path.as_deref())),
        );
        return Some(Value::Object(fields));
    }
    if large == 0 {
        return None;
    }
    let mut stubbed = input.clone();
    let mut ordinal = 0;
    // Iteratively: the model chooses how deep its arguments nest.
    let mut stack = vec![&mut stubbed];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) if text.len() > limit => {
                ordinal += 1;
                let path = store.save(ordinal, text);
                *text = argument_stub(text, path.as_deref());
            }
            // In reverse, so the saved files are numbered in the order the arguments are sent.
            Value::Array(items) => stack.extend(items.iter_mut().rev()),
            Value::Object(fields) => {
                let mut values: Vec<&mut Value> = fields.values_mut().collect();
                values.reverse();
                stack.extend(values);
            }
            _ => {}
        }
    }
    Some(stubbed)
}

/// Bytes a stub is reckoned at, with its path, as sent.
const STUB_BYTES: usize = 600;

/// How many strings of `input` are longer than `limit` bytes and their bytes as sent
/// (JSON-escaped, quotes included), and the bytes of all its text and values, unescaped
/// (keys and strings, a few for every value).
fn measure(input: &Value, limit: usize) -> (usize, usize, usize) {
    let (mut count, mut bytes, mut all) = (0, 0, 0);
    let mut stack = vec![input];
    while let Some(value) = stack.pop() {
        all += 4;
        match value {
            Value::String(text) => {
                all += text.len();
                if text.len() > limit {
                    count += 1;
                    bytes += serde_json::to_string(text).map_or(text.len(), |sent| sent.len());
                }
            }
            Value::Number(number) => all += number.to_string().len(),
            Value::Array(items) => stack.extend(items),
            Value::Object(fields) => {
                all += fields.keys().map(String::len).sum::<usize>();
                stack.extend(fields.values());
            }
            Value::Bool(_) | Value::Null => {}
        }
    }
    (count, bytes, all)
}

/// The text an argument of `text` becomes: its size and where to read it.
pub fn argument_stub(text: &str, saved: Option<&Path>) -> String {
    let lines = match text.lines().count() {
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    };
    let size = format!("{} bytes, {lines}", text.len());
    match saved {
        Some(path) => {
            let path = path.display().to_string();
            let json_path = Value::String(path.clone());
            format!(
                "[argument omitted to save context: {size}; saved whole in {path}: read it with read_file {{\"path\": {json_path}, \"offset\": LINE, \"limit\": LINES}}]"
            )
        }
        None => format!(
            "[argument omitted to save context: {size}; it could not be saved where tools can read it (no results folder)]"
        ),
    }
}

impl ContextState {
    /// Tokens the newest message sheds once its calls' arguments longer than `limit` are
    /// stubs, as they are before any request carries them again (its calls are run or
    /// answered first): what a reply's megabyte `write_file` adds to the next prompt is a
    /// stub, not the megabyte. 0 when nothing in it is that large.
    pub fn pending_argument_savings(&mut self, limit: usize) -> u64 {
        let Some(index) = self.messages.len().checked_sub(1) else {
            return 0;
        };
        // Where the saved file will be does not matter to the count but for its length.
        let mut placeholder =
            |_: usize, _: &str| Some(std::path::PathBuf::from("results/call-argument-1.txt"));
        let stubbed: Vec<(String, Value)> = self.messages[index]
            .tool_uses()
            .filter_map(|call| {
                Some((
                    call.id.to_string(),
                    stub_arguments(call.input, limit, &mut placeholder)?,
                ))
            })
            .collect();
        if stubbed.is_empty() {
            return 0;
        }
        let mut shown = self.messages[index].clone();
        for block in &mut shown.content {
            if let ContentBlock::ToolUse { id, input, .. } = block
                && let Some((_, stub)) = stubbed.iter().find(|(call, _)| call == id)
            {
                input.clone_from(stub);
            }
        }
        let whole = self.message_tokens(index);
        whole.saturating_sub(self.counter.message(&shown))
    }

    /// Shows call `id`'s arguments in `messages()[index]` as `input` from now on (the
    /// message is counted and logged again).
    pub fn set_call_input(&mut self, index: usize, id: &str, input: Value) -> bool {
        let Some(message) = self.messages.get_mut(index) else {
            return false;
        };
        let Some(slot) = message.content.iter_mut().find_map(|block| match block {
            ContentBlock::ToolUse { id: call, input, .. } if call == id => Some(input),
            _ => None,
        }) else {
            return false;
        };
        *slot = input;
        self.counts[index] = None;
        self.mark_dirty(index);
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn saving(
        saved: &mut Vec<(usize, String)>,
    ) -> impl FnMut(usize, &str) -> Option<std::path::PathBuf> + '_ {
        |ordinal, text| {
            saved.push((ordinal, text.to_string()));
            Some(std::path::PathBuf::from(format!("/r/c-argument-{ordinal}.txt")))
        }
    }

    #[test]
    fn small_arguments_stay_as_they_are() {
        let mut saved = Vec::new();
        let input = json!({"path": "a.txt", "content": "short"});
        assert_eq!(stub_arguments(&input, 2000, &mut saving(&mut saved)), None);
        assert!(saved.is_empty());
    }

    #[test]
    fn each_large_string_becomes_a_stub_naming_its_saved_file_in_order() {
        let mut saved = Vec::new();
        let first = "a\n".repeat(1200);
        let second = "b".repeat(3000);
        // `new` before `old`: sorted, and as written, agree (a `serde_json::Map` sends its
        // keys in one order or the other, depending on serde_json's `preserve_order`).
        let input = json!({"path": "a.txt", "edits": [{"new": second, "old": first}]});
        let stubbed = stub_arguments(&input, 2000, &mut saving(&mut saved)).unwrap();
        assert_eq!(
            stubbed,
            json!({"path": "a.txt", "edits": [{
                "old": "[argument omitted to save context: 2400 bytes, 1200 lines; saved whole in /r/c-argument-2.txt: read it with read_file {\"path\": \"/r/c-argument-2.txt\", \"offset\": LINE, \"limit\": LINES}]",
                "new": "[argument omitted to save context: 3000 bytes, 1 line; saved whole in /r/c-argument-1.txt: read it with read_file {\"path\": \"/r/c-argument-1.txt\", \"offset\": LINE, \"limit\": LINES}]",
            }]})
        );
        // Keys go in the order they are sent.
        assert_eq!(saved, vec![(1, second), (2, first)]);
    }

    #[test]
    fn many_small_strings_become_one_stub_and_nested_ones_are_found() {
        let mut saved = Vec::new();
        let input = json!({"items": vec!["xy"; 1000]});
        let stubbed = stub_arguments(&input, 2000, &mut saving(&mut saved)).unwrap();
        let text = input.to_string();
        assert_eq!(
            stubbed,
            json!({"arguments_omitted": argument_stub(&text, Some(Path::new("/r/c-argument-1.txt")))})
        );
        assert_eq!(saved, vec![(1, text)]);
        // A large string among them is saved once, in the whole, not on its own as well.
        let mut saved = Vec::new();
        let input = json!({"big": "w".repeat(5000), "items": vec!["xy"; 1000]});
        let stubbed = stub_arguments(&input, 2000, &mut saving(&mut saved)).unwrap();
        let text = input.to_string();
        assert_eq!(
            stubbed,
            json!({"arguments_omitted": argument_stub(&text, Some(Path::new("/r/c-argument-1.txt")))})
        );
        assert_eq!(saved, vec![(1, text)]);
        // As deep as parsed arguments go, one large string at the bottom.
        let mut deep = json!("z".repeat(2500));
        for _ in 0..120 {
            deep = Value::Array(vec![deep]);
        }
        let mut saved = Vec::new();
        let mut expected = json!(argument_stub(
            &"z".repeat(2500),
            Some(Path::new("/r/c-argument-1.txt"))
        ));
        for _ in 0..120 {
            expected = Value::Array(vec![expected]);
        }
        assert_eq!(
            stub_arguments(&deep, 2_000, &mut saving(&mut saved)),
            Some(expected)
        );
        assert_eq!(saved, vec![(1, "z".repeat(2500))]);
    }

    #[test]
    fn an_argument_that_cannot_be_saved_says_so() {
        let input = json!({"content": "q".repeat(3000)});
        let stubbed = stub_arguments(&input, 2000, &mut |_: usize, _: &str| None).unwrap();
        assert_eq!(
            stubbed,
            json!({"content": "[argument omitted to save context: 3000 bytes, 1 line; it could not be saved where tools can read it (no results folder)]"})
        );
    }
}
