//! The view's turn numbers and what a rewind sets aside: the conversation numbers the
//! person's messages as the agent numbers its turns, so a rewind naming a turn finds its
//! message.

use super::{Conversation, Entry};

impl Conversation {
    /// The person's message that starts the next turn; its number.
    pub fn push_turn(&mut self, text: String) -> u32 {
        self.next_turn = self.next_turn.saturating_add(1);
        self.user_turns.push(self.next_turn);
        self.push(Entry::User(text));
        self.next_turn
    }

    /// A rewind set aside turn `turn` and what followed: the entries from its message
    /// on (or from the first later one the view still holds) leave the view. How many
    /// entries left.
    pub fn set_aside_from(&mut self, turn: u32) -> usize {
        let Some(kept) = self.user_turns.iter().position(|&shown| shown >= turn) else {
            return 0;
        };
        let Some(index) = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, entry)| matches!(entry, Entry::User(_)))
            .nth(kept)
            .map(|(index, _)| index)
        else {
            return 0;
        };
        let removed = self.entries.len() - index;
        self.entries.truncate(index);
        self.cache.get_mut().truncate(index);
        self.user_turns.truncate(kept);
        self.top.set(None);
        self.left_bottom.set(None);
        self.reading.forget_selection();
        removed
    }
}
