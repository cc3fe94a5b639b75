//! Keys pressed in a burst after Esc, put back together. crossterm reads `ESC ESC [ A`
//! (Esc, then ↑, arriving in one read, as tmux and fast typists send them) as one Esc
//! and drops the second ESC, so the rest of the arrow's sequence arrives as the
//! characters `[` and `A`: Esc ↑ Enter sent the text "[A" to the model. A person cannot
//! type `[` within the same read as an Esc (a paste arrives bracketed, as one event), so
//! an Esc followed at once by `[` or `O` and the rest of a key's sequence is that key.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures_util::Stream;

/// The longest key sequence body looked for after `ESC [` (`24;8~` and the like).
const LONGEST_BODY: usize = 8;

/// The terminal's events (`inner`) with bursts after Esc repaired. What follows an Esc is
/// taken only if it has arrived already, polled with the task's own waker, so a key that
/// arrives later wakes the loop as it would have.
pub(crate) struct KeyBursts<S> {
    inner: S,
    /// Events read and not yet handed out.
    ready: VecDeque<std::io::Result<Event>>,
}

impl<S> KeyBursts<S> {
    pub(crate) fn new(inner: S) -> Self {
        KeyBursts {
            inner,
            ready: VecDeque::new(),
        }
    }
}

impl KeyBursts<crate::term_input::TerminalInput> {
    /// The terminal reader underneath (to pause it while an editor has the terminal).
    pub(crate) fn input(&self) -> &crate::term_input::TerminalInput {
        &self.inner
    }

    /// Whether events that have arrived are still to be handed out.
    pub(crate) fn has_waiting(&self) -> bool {
        !self.ready.is_empty() || self.inner.has_waiting()
    }
}

impl<S> Stream for KeyBursts<S>
where
    S: Stream<Item = std::io::Result<Event>> + Unpin,
{
    type Item = std::io::Result<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(event) = this.ready.pop_front() {
            return Poll::Ready(Some(event));
        }
        let event = match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(event)) => event,
            other => return other,
        };
        if !matches!(&event, Ok(Event::Key(key)) if is_plain(key, KeyCode::Esc)) {
            return Poll::Ready(Some(event));
        }
        // What arrived with the Esc: plain characters only, at most a sequence's length.
        let mut after = Vec::new();
        while after.len() < LONGEST_BODY + 2 {
            match Pin::new(&mut this.inner).poll_next(cx) {
                Poll::Ready(Some(Ok(Event::Key(key)))) if is_char(&key) => after.push(key),
                Poll::Ready(Some(other)) => {
                    this.ready.push_back(other);
                    break;
                }
                Poll::Ready(None) | Poll::Pending => break,
            }
        }
        let (key, used) = match repaired(&after) {
            Some((key, used)) => (Some(key), used),
            None => (None, 0),
        };
        let mut front: Vec<std::io::Result<Event>> = Vec::new();
        front.extend(key.map(|key| Ok(Event::Key(key))));
        front.extend(after[used..].iter().map(|key| Ok(Event::Key(*key))));
        for event in front.into_iter().rev() {
            this.ready.push_front(event);
        }
        Poll::Ready(Some(event))
    }
}

fn is_plain(key: &KeyEvent, code: KeyCode) -> bool {
    key.code == code && key.modifiers.is_empty() && key.kind == KeyEventKind::Press
}

/// A character typed with no modifier but Shift (which capital letters carry).
fn is_char(key: &KeyEvent) -> bool {
    matches!(key.code, KeyCode::Char(_))
        && (key.modifiers - KeyModifiers::SHIFT).is_empty()
        && key.kind == KeyEventKind::Press
}

/// The key whose sequence (after its lost ESC) the characters `after` begin with, and how
/// many of them it takes: `[A` ↑, `[1;5C` Ctrl-→, `[5~` PgUp, `OP` F1.
pub(crate) fn repaired(after: &[KeyEvent]) -> Option<(KeyEvent, usize)> {
    let chars: Vec<char> = after
        .iter()
        .map_while(|key| match key.code {
            KeyCode::Char(c) => Some(c),
            _ => None,
        })
        .collect();
    match chars.first()? {
        'O' => {
            let code = match chars.get(1)? {
                'P' => KeyCode::F(1),
                'Q' => KeyCode::F(2),
                'R' => KeyCode::F(3),
                'S' => KeyCode::F(4),
                final_char => cursor_key(*final_char)?,
            };
            Some((KeyEvent::new(code, KeyModifiers::NONE), 2))
        }
        '[' => {
            let body_len = chars[1..]
                .iter()
                .take(LONGEST_BODY)
                .position(|c| !(c.is_ascii_digit() || *c == ';'))?;
            let params: String = chars[1..1 + body_len].iter().collect();
            let final_char = chars[1 + body_len];
            let mut numbers = params.split(';');
            let first = numbers.next().unwrap_or_default();
            let modifiers = numbers
                .next()
                .and_then(|m| m.parse::<u8>().ok())
                .map_or(KeyModifiers::NONE, modifiers_of);
            let code = match final_char {
                '~' => tilde_key(first.parse().ok()?)?,
                'Z' if params.is_empty() => {
                    return Some((KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT), 2));
                }
                other => cursor_key(other)?,
            };
            Some((KeyEvent::new(code, modifiers), body_len + 2))
        }
        _ => None,
    }
}

fn cursor_key(final_char: char) -> Option<KeyCode> {
    Some(match final_char {
        'A' => KeyCode::Up,
        'B' => KeyCode::Down,
        'C' => KeyCode::Right,
        'D' => KeyCode::Left,
        'H' => KeyCode::Home,
        'F' => KeyCode::End,
        _ => return None,
    })
}

fn tilde_key(number: u8) -> Option<KeyCode> {
    Some(match number {
        1 | 7 => KeyCode::Home,
        2 => KeyCode::Insert,
        3 => KeyCode::Delete,
        4 | 8 => KeyCode::End,
        5 => KeyCode::PageUp,
        6 => KeyCode::PageDown,
        11..=15 => KeyCode::F(number - 10),
        17..=21 => KeyCode::F(number - 11),
        23 | 24 => KeyCode::F(number - 12),
        _ => return None,
    })
}

/// xterm's modifier parameter: one more than the bits Shift 1, Alt 2, Ctrl 4.
fn modifiers_of(parameter: u8) -> KeyModifiers {
    let bits = parameter.saturating_sub(1);
    let mut modifiers = KeyModifiers::NONE;
    if bits & 1 != 0 {
        modifiers |= KeyModifiers::SHIFT;
    }
    if bits & 2 != 0 {
        modifiers |= KeyModifiers::ALT;
    }
    if bits & 4 != 0 {
        modifiers |= KeyModifiers::CONTROL;
    }
    modifiers
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn chars(text: &str) -> Vec<KeyEvent> {
        text.chars()
            .map(|c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
            .collect()
    }

    #[test]
    fn sequences_after_a_lost_esc_are_their_keys() {
        let key = |code, modifiers| KeyEvent::new(code, modifiers);
        for (typed, expected) in [
            ("[A", Some((key(KeyCode::Up, KeyModifiers::NONE), 2))),
            ("[Dxyz", Some((key(KeyCode::Left, KeyModifiers::NONE), 2))),
            ("OA", Some((key(KeyCode::Up, KeyModifiers::NONE), 2))),
            ("OP", Some((key(KeyCode::F(1), KeyModifiers::NONE), 2))),
            ("[5~", Some((key(KeyCode::PageUp, KeyModifiers::NONE), 3))),
            ("[24~", Some((key(KeyCode::F(12), KeyModifiers::NONE), 4))),
            ("[1;5C", Some((key(KeyCode::Right, KeyModifiers::CONTROL), 5))),
            ("[3;2~", Some((key(KeyCode::Delete, KeyModifiers::SHIFT), 5))),
            ("[Z", Some((key(KeyCode::BackTab, KeyModifiers::SHIFT), 2))),
            // Not a key's sequence, or not whole: left as the characters they are.
            ("[", None),
            ("[1;5", None),
            ("[Q", None),
            ("[99~", None),
            ("hello", None),
            ("", None),
        ] {
            assert_eq!(repaired(&chars(typed)), expected, "{typed}");
        }
    }

    /// The burst tmux sends for Esc ↑ Enter, as crossterm hands it over: one Esc, `[`,
    /// `A`, Enter. Out come Esc, ↑, Enter; a lone Esc and keys that arrive later stay as
    /// they are.
    #[test]
    fn a_burst_after_esc_comes_out_whole() {
        let esc = KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE);
        let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
        let mut burst: Vec<std::io::Result<Event>> = vec![Ok(Event::Key(esc))];
        burst.extend(chars("[A").into_iter().map(|key| Ok(Event::Key(key))));
        burst.push(Ok(Event::Key(enter)));
        burst.push(Ok(Event::Key(esc)));
        burst.extend(chars("x").into_iter().map(|key| Ok(Event::Key(key))));
        use futures_util::{FutureExt, StreamExt};
        let mut bursts = KeyBursts::new(futures_util::stream::iter(burst));
        let mut seen = Vec::new();
        while let Some(event) = bursts.next().now_or_never().flatten() {
            match event {
                Ok(Event::Key(key)) => seen.push(key.code),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            seen,
            vec![
                KeyCode::Esc,
                KeyCode::Up,
                KeyCode::Enter,
                KeyCode::Esc,
                KeyCode::Char('x')
            ]
        );
    }
}
