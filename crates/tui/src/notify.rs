//! Desktop notifications through the terminal: when an approval waits or a turn ends
//! while the terminal's window is not focused, the workbench writes an escape sequence
//! the terminal turns into a notification (or a bell).
//!
//! No sequence is understood everywhere, and none can be asked for, so the kind is
//! chosen by what the terminal says it is: `OSC 9` in iTerm2; `OSC 777;notify` in
//! Ghostty, WezTerm (both also take `OSC 9`, without a title), foot and urxvt; kitty's
//! own `OSC 99`; the bell anywhere else. tmux drops an OSC it is not told to pass
//! through (`allow-passthrough`, off by default), so inside tmux `auto` rings the bell,
//! which tmux passes on as an alert; a kind named in the config is wrapped in tmux's
//! passthrough. A terminal ignores an OSC it does not know.
//!
//! The text comes partly from the model (a tool's name): it is cleaned to printable
//! characters, with no separator of the sequence left in it, and capped, so a reply can
//! neither end the sequence early nor smuggle one of its own.

use miniagent_protocol::NotifySetting;

/// The most characters of a notification's body (titles are fixed).
const MAX_BODY_CHARS: usize = 120;
/// What the notification is titled, where the sequence has a title.
const TITLE: &str = "miniagent";

/// The kind of sequence the workbench writes, decided once at start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notifier {
    Osc9,
    Osc777,
    Osc99,
    Bell,
    Off,
}

/// The notifier for `setting` in the terminal `var` describes (`TERM`, `TERM_PROGRAM`,
/// `KITTY_WINDOW_ID`, `TMUX`, and the opt-out `MINIAGENT_NO_NOTIFY`, which wins when set
/// to anything but an empty string, as `NO_COLOR` does).
pub fn choose(setting: NotifySetting, var: impl Fn(&str) -> Option<String>) -> Notifier {
    if var("MINIAGENT_NO_NOTIFY").is_some_and(|value| !value.is_empty()) {
        return Notifier::Off;
    }
    match setting {
        NotifySetting::Osc9 => Notifier::Osc9,
        NotifySetting::Osc777 => Notifier::Osc777,
        NotifySetting::Osc99 => Notifier::Osc99,
        NotifySetting::Bell => Notifier::Bell,
        NotifySetting::Off => Notifier::Off,
        NotifySetting::Auto => {
            let set = |name: &str| var(name).filter(|value| !value.is_empty());
            if set("TMUX").is_some() {
                return Notifier::Bell;
            }
            let program = set("TERM_PROGRAM").unwrap_or_default();
            let term = set("TERM").unwrap_or_default();
            match program.as_str() {
                "iTerm.app" => Notifier::Osc9,
                "ghostty" | "WezTerm" => Notifier::Osc777,
                _ if set("KITTY_WINDOW_ID").is_some() || term == "xterm-kitty" => Notifier::Osc99,
                _ if term.starts_with("foot") || term.starts_with("rxvt-unicode") => Notifier::Osc777,
                _ => Notifier::Bell,
            }
        }
    }
}

/// The bytes that show `body` as a notification with `notifier`; `in_tmux` wraps an OSC
/// in tmux's passthrough. Empty when off.
pub fn sequence(notifier: Notifier, body: &str, in_tmux: bool) -> Vec<u8> {
    let body = clean(body);
    let osc = match notifier {
        Notifier::Off => return Vec::new(),
        Notifier::Bell => return b"\x07".to_vec(),
        // "miniagent: " first: Windows Terminal and ConEmu read `OSC 9;<digit>;` as one of
        // their own commands.
        Notifier::Osc9 => format!("\x1b]9;{TITLE}: {body}\x07"),
        Notifier::Osc777 => format!("\x1b]777;notify;{TITLE};{body}\x07"),
        Notifier::Osc99 => format!("\x1b]99;;{TITLE}: {body}\x1b\\"),
    };
    if !in_tmux {
        return osc.into_bytes();
    }
    // tmux passes on what is between `DCS tmux;` and ST, with each ESC in it doubled.
    let mut wrapped = b"\x1bPtmux;".to_vec();
    for byte in osc.bytes() {
        if byte == 0x1b {
            wrapped.push(0x1b);
        }
        wrapped.push(byte);
    }
    wrapped.extend_from_slice(b"\x1b\\");
    wrapped
}

/// `text` as a notification may carry it: escape sequences and every control character
/// gone (newlines become spaces), bidi controls too, `;` (a field separator of `OSC 777`
/// and `OSC 99`) a comma, at most [`MAX_BODY_CHARS`] characters.
fn clean(text: &str) -> String {
    let mut out = String::new();
    for c in miniagent_text::clean(text).chars() {
        let c = match c {
            '\n' | '\t' => ' ',
            ';' => ',',
            c if !miniagent_text::shown(c) => continue,
            c => c,
        };
        if out.chars().count() == MAX_BODY_CHARS {
            out.pop();
            out.push('…');
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    /// `auto` picks by the terminal; a named kind is taken as it is; the opt-out wins.
    #[test]
    fn the_kind_follows_the_terminal_the_setting_and_the_opt_out() {
        type Case<'a> = (NotifySetting, &'a [(&'a str, &'a str)], Notifier);
        let cases: &[Case] = &[
            (
                NotifySetting::Auto,
                &[("TERM_PROGRAM", "iTerm.app")],
                Notifier::Osc9,
            ),
            (
                NotifySetting::Auto,
                &[("TERM_PROGRAM", "ghostty")],
                Notifier::Osc777,
            ),
            (
                NotifySetting::Auto,
                &[("TERM_PROGRAM", "WezTerm")],
                Notifier::Osc777,
            ),
            (NotifySetting::Auto, &[("TERM", "xterm-kitty")], Notifier::Osc99),
            (
                NotifySetting::Auto,
                &[("KITTY_WINDOW_ID", "1"), ("TERM", "xterm-256color")],
                Notifier::Osc99,
            ),
            (NotifySetting::Auto, &[("TERM", "foot")], Notifier::Osc777),
            (
                NotifySetting::Auto,
                &[("TERM", "rxvt-unicode-256color")],
                Notifier::Osc777,
            ),
            (
                NotifySetting::Auto,
                &[("TERM_PROGRAM", "Apple_Terminal")],
                Notifier::Bell,
            ),
            (NotifySetting::Auto, &[("TERM", "xterm-256color")], Notifier::Bell),
            (NotifySetting::Auto, &[], Notifier::Bell),
            // tmux drops an OSC unless passthrough is allowed: the bell reaches the person.
            (
                NotifySetting::Auto,
                &[("TMUX", "/tmp/tmux-1/default,1,0"), ("TERM_PROGRAM", "iTerm.app")],
                Notifier::Bell,
            ),
            (
                NotifySetting::Osc777,
                &[("TERM", "xterm-256color")],
                Notifier::Osc777,
            ),
            (NotifySetting::Osc99, &[], Notifier::Osc99),
            (
                NotifySetting::Bell,
                &[("TERM_PROGRAM", "iTerm.app")],
                Notifier::Bell,
            ),
            (
                NotifySetting::Off,
                &[("TERM_PROGRAM", "iTerm.app")],
                Notifier::Off,
            ),
            (
                NotifySetting::Osc9,
                &[("MINIAGENT_NO_NOTIFY", "1")],
                Notifier::Off,
            ),
            (
                NotifySetting::Auto,
                &[("MINIAGENT_NO_NOTIFY", "yes"), ("TERM_PROGRAM", "iTerm.app")],
                Notifier::Off,
            ),
            // Set but empty does not opt out, as with NO_COLOR.
            (
                NotifySetting::Auto,
                &[("MINIAGENT_NO_NOTIFY", ""), ("TERM_PROGRAM", "iTerm.app")],
                Notifier::Osc9,
            ),
        ];
        for (setting, vars, expected) in cases {
            assert_eq!(
                choose(*setting, env(vars)),
                *expected,
                "{setting:?} with {vars:?}"
            );
        }
    }

    /// Each kind's exact bytes, and tmux's passthrough around an OSC (its ESCs doubled).
    #[test]
    fn each_kind_writes_its_sequence() {
        let body = "approval waiting: bash";
        assert_eq!(
            sequence(Notifier::Osc9, body, false),
            b"\x1b]9;miniagent: approval waiting: bash\x07".to_vec()
        );
        assert_eq!(
            sequence(Notifier::Osc777, body, false),
            b"\x1b]777;notify;miniagent;approval waiting: bash\x07".to_vec()
        );
        assert_eq!(
            sequence(Notifier::Osc99, body, false),
            b"\x1b]99;;miniagent: approval waiting: bash\x1b\\".to_vec()
        );
        assert_eq!(sequence(Notifier::Bell, body, true), b"\x07".to_vec());
        assert_eq!(sequence(Notifier::Off, body, false), Vec::<u8>::new());
        assert_eq!(
            sequence(Notifier::Osc99, "turn finished", true),
            b"\x1bPtmux;\x1b\x1b]99;;miniagent: turn finished\x1b\x1b\\\x1b\\".to_vec()
        );
    }

    /// A hostile name cannot end the sequence, start another, or split its fields: what
    /// is written is the sequence's own bytes around printable text.
    #[test]
    fn nothing_from_the_text_reaches_the_terminal_raw() {
        let hostile = "x\x07\x1b]0;owned\x07\x1b\\\u{9c}\u{9d}8;;http://evil\u{202e}; rm\r\n\u{7f}tail";
        let written = sequence(Notifier::Osc777, hostile, false);
        let text = String::from_utf8(written).expect("UTF-8");
        let inner = text
            .strip_prefix("\x1b]777;notify;miniagent;")
            .and_then(|rest| rest.strip_suffix('\x07'))
            .expect("one whole sequence");
        // The C1 OSC opened a string the cleaner swallowed whole, hidden link and all.
        assert_eq!(inner, "x tail");
        assert!(inner.chars().all(|c| !c.is_control()), "{inner:?}");
        let fields = sequence(Notifier::Osc777, "a;b\u{202e}c\td\ne", false);
        assert_eq!(fields, b"\x1b]777;notify;miniagent;a,bc d e\x07".to_vec());
        let long = "é".repeat(500);
        let capped = sequence(Notifier::Osc9, &long, false);
        let capped = String::from_utf8(capped).expect("UTF-8");
        assert_eq!(
            capped,
            format!("\x1b]9;miniagent: {}…\x07", "é".repeat(MAX_BODY_CHARS - 1))
        );
    }
}
