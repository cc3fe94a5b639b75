//! Values that must never be shown or written: the API key and configured MCP header and
//! environment values. Events, tool output on screen, session logs and their index
//! entries pass through [`Secrets::redact`] on their way out.

use std::borrow::Cow;
use std::sync::Arc;

use miniagent_protocol::Event;

/// What a secret becomes.
pub const REDACTED: &str = "[redacted]";
/// Shorter values are not redacted: replacing two characters everywhere would wreck the
/// text and protect nothing.
const MIN_SECRET_LEN: usize = 6;

/// The session's secrets, in every form text may hold them; cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Secrets(Arc<Vec<String>>);

impl Secrets {
    pub fn new(values: Vec<String>) -> Self {
        let mut forms: Vec<String> = Vec::new();
        for value in values {
            let value = value.trim().to_string();
            if value.len() < MIN_SECRET_LEN {
                continue;
            }
            // The form a JSON string gives it, which is what a log line holds.
            let quoted = serde_json::to_string(&value).unwrap_or_default();
            let escaped = quoted
                .strip_prefix('"')
                .and_then(|rest| rest.strip_suffix('"'))
                .unwrap_or(&quoted)
                .to_string();
            for form in [value, escaped] {
                if !forms.contains(&form) {
                    forms.push(form);
                }
            }
        }
        // Longest first, so a secret containing another is replaced whole.
        forms.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Self(Arc::new(forms))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The forms redacted, longest first.
    pub fn forms(&self) -> &[String] {
        &self.0
    }

    /// `text` with every secret replaced by `[redacted]` (borrowed when there is none).
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for secret in self.0.iter() {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
            }
        }
        out
    }

    /// An event with every secret in it replaced (itself when there is none).
    pub fn redact_event(&self, event: Event) -> Event {
        if self.is_empty() {
            return event;
        }
        let Ok(json) = serde_json::to_string(&event) else {
            return event;
        };
        match self.redact(&json) {
            Cow::Borrowed(_) => event,
            Cow::Owned(clean) => serde_json::from_str(&clean).unwrap_or(Event::Notice {
                message: format!("an event held a secret and was withheld ({REDACTED})"),
            }),
        }
    }
}

/// Redacts a stream of fragments (streamed text) where a secret may be split across
/// fragments: the last few bytes are held back until the next fragment or the end.
#[derive(Debug, Default)]
pub struct StreamRedactor {
    secrets: Secrets,
    pending: String,
}

impl StreamRedactor {
    pub fn new(secrets: Secrets) -> Self {
        Self {
            secrets,
            pending: String::new(),
        }
    }

    /// Takes a fragment; returns what can be shown now.
    pub fn push(&mut self, fragment: &str) -> Option<String> {
        if self.secrets.is_empty() {
            return Some(fragment.to_string()).filter(|f| !f.is_empty());
        }
        self.pending.push_str(fragment);
        if let Cow::Owned(clean) = self.secrets.redact(&self.pending) {
            self.pending = clean;
        }
        // A secret not yet complete starts within the last (longest - 1) bytes.
        let hold = self
            .secrets
            .forms()
            .first()
            .map_or(0, |s| s.len().saturating_sub(1));
        let mut cut = self.pending.len().saturating_sub(hold);
        while !self.pending.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut == 0 {
            return None;
        }
        let rest = self.pending.split_off(cut);
        Some(std::mem::replace(&mut self.pending, rest))
    }

    /// What is still held back, at the end of the stream.
    pub fn finish(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.pending);
        Some(self.secrets.redact(&rest).into_owned()).filter(|r| !r.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_secret_split_across_fragments_is_still_redacted() {
        let mut stream = StreamRedactor::new(Secrets::new(vec!["sk-live-123456".into()]));
        let mut shown = String::new();
        for fragment in ["The key is sk-li", "ve-12", "3456, and ", "that is all. 重要"] {
            shown.extend(stream.push(fragment));
        }
        shown.extend(stream.finish());
        assert_eq!(shown, "The key is [redacted], and that is all. 重要");
    }

    #[test]
    fn short_values_are_ignored_and_json_escaped_forms_are_kept() {
        let secrets = Secrets::new(vec!["ab".into(), "sk-\"quoted\"".into()]);
        assert_eq!(
            secrets.forms(),
            [r#"sk-\"quoted\""#.to_string(), r#"sk-"quoted""#.to_string()]
        );
    }

    #[test]
    fn events_lose_their_secrets_and_keep_their_shape() {
        let secrets = Secrets::new(vec!["sk-live-123456".into()]);
        let event = Event::ToolOutputDelta {
            id: "c1".into(),
            delta: "KEY=sk-live-123456\n".into(),
        };
        assert_eq!(
            secrets.redact_event(event),
            Event::ToolOutputDelta {
                id: "c1".into(),
                delta: "KEY=[redacted]\n".into()
            }
        );
        let clean = Event::Notice {
            message: "nothing here".into(),
        };
        assert_eq!(secrets.redact_event(clean.clone()), clean);
        assert!(matches!(secrets.redact("plain"), Cow::Borrowed("plain")));
    }
}
