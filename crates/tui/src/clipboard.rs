//! Copying to the clipboard of the terminal the workbench runs in, with OSC 52: the
//! text, base64-encoded, inside `ESC ] 52 ; c ; … BEL`. It works over SSH (the terminal
//! at the person's end sets its own clipboard) and inside tmux when tmux's
//! `set-clipboard` is `on` (tmux takes the sequence itself, keeps it as a paste buffer
//! and passes it on to the terminal outside). No passthrough wrapping is sent: tmux
//! handles the plain sequence, and a wrapped one needs `allow-passthrough`, off by
//! default. A terminal gives no answer, so nobody can tell whether it copied; the
//! notice after a copy says so.

use base64::Engine as _;

/// The most text one copy sends. Terminals cap what they accept (xterm and tmux near
/// 100 KB of encoded payload, others less); base64 makes the payload a third larger.
pub const MAX_COPY_BYTES: usize = 74 * 1024;

/// Why a text cannot be copied.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CopyError {
    #[error("nothing to copy")]
    Empty,
    #[error(
        "{} KB is too much for the terminal's clipboard (OSC 52 takes up to {} KB); nothing was copied",
        .0.div_ceil(1024),
        MAX_COPY_BYTES / 1024
    )]
    TooLarge(usize),
}

/// The text a copy puts on the clipboard: escape sequences and other control characters
/// removed (a model's reply or a command's output may carry them, and the person pastes
/// the copy into a shell), line breaks and tabs kept.
pub fn copied_text(text: &str) -> String {
    miniagent_text::clean(text).into_owned()
}

/// The OSC 52 sequence that puts `text` on the clipboard. The payload is base64 alone,
/// so no byte of the text can end the sequence or reach the terminal raw.
pub fn osc52(text: &str) -> Result<String, CopyError> {
    if text.is_empty() {
        return Err(CopyError::Empty);
    }
    if text.len() > MAX_COPY_BYTES {
        return Err(CopyError::TooLarge(text.len()));
    }
    let payload = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    Ok(format!("\x1b]52;c;{payload}\x07"))
}

/// What the person reads after a copy was sent.
pub fn sent_notice(what: &str, bytes: usize) -> String {
    format!(
        "copied {what} ({}): sent to the terminal's clipboard (OSC 52); if nothing was copied, your terminal does not allow it",
        crate::tree::human_size(u64::try_from(bytes).unwrap_or(u64::MAX))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_sequence_is_base64_between_the_osc_52_marks() {
        assert_eq!(osc52("hi\n"), Ok("\x1b]52;c;aGkK\x07".to_string()));
        assert_eq!(osc52("文"), Ok("\x1b]52;c;5paH\x07".to_string()));
        assert_eq!(osc52(""), Err(CopyError::Empty));
        let limit = "x".repeat(MAX_COPY_BYTES);
        assert!(osc52(&limit).is_ok());
        assert_eq!(
            osc52(&format!("{limit}x")),
            Err(CopyError::TooLarge(MAX_COPY_BYTES + 1))
        );
        assert_eq!(
            CopyError::TooLarge(MAX_COPY_BYTES + 1).to_string(),
            "75 KB is too much for the terminal's clipboard (OSC 52 takes up to 74 KB); nothing was copied"
        );
    }

    #[test]
    fn hostile_text_never_ends_the_sequence() {
        // A BEL or ST inside the text would end the sequence early and let the rest
        // reach the terminal raw; the copy drops the controls and the payload is base64.
        // (A C1 CSI, 0x9b, takes the `f` after it as its final byte.)
        let hostile = "a\x07b\x1b\\c\x1b]52;c;ZXZpbA==\x07d\x1b[2Je\u{9b}f\tg\nh";
        let copied = copied_text(hostile);
        assert_eq!(copied, "abcde\tg\nh");
        let sequence = osc52(&copied).unwrap_or_default();
        let payload = &sequence["\x1b]52;c;".len()..sequence.len() - 1];
        assert!(
            payload
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'='),
            "{payload:?}"
        );
        assert!(sequence.ends_with('\x07'));
        assert_eq!(sequence.matches('\x07').count(), 1);
    }
}
