//! A `session/prompt`'s content blocks as the text of one message, or as one of the
//! slash commands this face runs itself.

use agent_client_protocol::v1::schema as acp;

/// What a prompt asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Prompt {
    /// A message for the model.
    Message(String),
    /// `/compact`: summarize the older history now.
    Compact,
    /// `/clear`: start the conversation over.
    Clear,
}

/// Why a prompt cannot be taken.
#[derive(Debug, PartialEq, Eq)]
pub struct Unsupported(pub String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads the blocks: text as it is, a resource link as an `@path` mention (the file's
/// path for a `file://` link), an embedded text resource as a fenced block headed by its
/// uri. Images, audio and binary resources were not advertised and are refused.
pub fn read(blocks: &[acp::ContentBlock]) -> Result<Prompt, Unsupported> {
    let mut parts: Vec<String> = Vec::new();
    for block in blocks {
        match block {
            acp::ContentBlock::Text(text) => parts.push(text.text.clone()),
            acp::ContentBlock::ResourceLink(link) => parts.push(format!("@{}", mention(&link.uri))),
            acp::ContentBlock::Resource(embedded) => match &embedded.resource {
                acp::EmbeddedResourceResource::TextResourceContents(resource) => {
                    parts.push(fenced(&resource.uri, &resource.text));
                }
                _ => {
                    return Err(Unsupported(
                        "binary resources are not supported; embed text or link the file".to_string(),
                    ));
                }
            },
            acp::ContentBlock::Image(_) => {
                return Err(Unsupported("images are not supported".to_string()));
            }
            acp::ContentBlock::Audio(_) => {
                return Err(Unsupported("audio is not supported".to_string()));
            }
            _ => return Err(Unsupported("this kind of content is not supported".to_string())),
        }
    }
    let text = parts.join("\n");
    Ok(match text.trim() {
        "/compact" => Prompt::Compact,
        "/clear" => Prompt::Clear,
        _ => Prompt::Message(text),
    })
}

/// A link's target as a mention: a local file's path, anything else as given.
fn mention(uri: &str) -> String {
    match uri.strip_prefix("file://") {
        Some(path) => percent_decoded(path),
        None => uri.to_string(),
    }
}

/// `%20` and the like back to their bytes; a malformed escape stays as written.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = (bytes[index] == b'%')
            .then(|| text.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                index += 3;
            }
            None => {
                out.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` in a fence longer than any run of backticks inside it, so it cannot close
/// early, headed by where it comes from.
fn fenced(uri: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("{}\n{fence}\n{text}{newline}{fence}", mention(uri))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn text_links_and_embedded_files_make_one_message() {
        let blocks = vec![
            acp::ContentBlock::Text(acp::TextContent::new("Look at")),
            acp::ContentBlock::ResourceLink(acp::ResourceLink::new("main.rs", "file:///ws/src/my%20main.rs")),
            acp::ContentBlock::Resource(acp::EmbeddedResource::new(
                acp::EmbeddedResourceResource::TextResourceContents(acp::TextResourceContents::new(
                    "a ``` b",
                    "file:///ws/notes.md",
                )),
            )),
        ];
        assert_eq!(
            read(&blocks),
            Ok(Prompt::Message(
                "Look at\n@/ws/src/my main.rs\n/ws/notes.md\n````\na ``` b\n````".to_string()
            ))
        );
    }

    #[test]
    fn slash_commands_are_recognized_and_images_refused() {
        let text = |text: &str| vec![acp::ContentBlock::Text(acp::TextContent::new(text))];
        assert_eq!(read(&text(" /compact ")), Ok(Prompt::Compact));
        assert_eq!(read(&text("/clear")), Ok(Prompt::Clear));
        assert_eq!(
            read(&text("/clear the cache")),
            Ok(Prompt::Message("/clear the cache".to_string()))
        );
        let image = vec![acp::ContentBlock::Image(acp::ImageContent::new(
            "AAAA",
            "image/png",
        ))];
        assert_eq!(
            read(&image),
            Err(Unsupported("images are not supported".to_string()))
        );
    }
}
