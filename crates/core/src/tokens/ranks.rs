//! An encoding's token ranks, read in place from the table `build.rs` wrote into the
//! binary (`layout.rs`), and byte-pair encoding of one piece with them. Nothing is built
//! at run time: looking a token up touches one slot and its bytes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::layout;

/// Ranks of one encoding's ordinary tokens.
pub(super) struct Ranks {
    offsets: &'static [u8],
    slots: &'static [u8],
    bytes: &'static [u8],
    mask: usize,
}

/// No pair to merge.
const NONE: u32 = u32::MAX;

/// The `index`th little-endian `u32` of `words`.
fn word(words: &[u8], index: usize) -> Option<u32> {
    let at = index.checked_mul(4)?;
    let bytes = words.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

impl Ranks {
    /// The ranks in `table`; `None` if it is not laid out as `layout.rs` says.
    pub(super) fn read(table: &'static [u8]) -> Option<Ranks> {
        let tokens = usize::try_from(word(table, 0)?).ok()?;
        let slots = usize::try_from(word(table, 1)?).ok()?;
        if slots != layout::slots_for(tokens) {
            return None;
        }
        let (offsets, rest) = table.get(8..)?.split_at_checked((tokens + 1) * 4)?;
        let (slots_part, bytes) = rest.split_at_checked(slots * 4)?;
        let ranks = Ranks {
            offsets,
            slots: slots_part,
            bytes,
            mask: slots - 1,
        };
        (usize::try_from(word(offsets, tokens)?).ok()? == bytes.len()).then_some(ranks)
    }

    /// The bytes of the token of `rank`.
    fn token(&self, rank: u32) -> Option<&'static [u8]> {
        let rank = usize::try_from(rank).ok()?;
        let start = usize::try_from(word(self.offsets, rank)?).ok()?;
        let end = usize::try_from(word(self.offsets, rank + 1)?).ok()?;
        self.bytes.get(start..end)
    }

    /// The rank of the token made of exactly `piece`, if there is one.
    pub(super) fn rank(&self, piece: &[u8]) -> Option<u32> {
        let mut slot = layout::hash(piece) as usize & self.mask;
        // At most half the slots are taken, so an empty one ends every probe; the bound
        // only guards against a table that is not what `read` checked.
        for _ in 0..=self.mask {
            let rank = word(self.slots, slot)?.checked_sub(1)?;
            if self.token(rank)? == piece {
                return Some(rank);
            }
            slot = (slot + 1) & self.mask;
        }
        None
    }

    /// The rank of `piece`, or [`NONE`].
    fn pair(&self, piece: &[u8]) -> u32 {
        self.rank(piece).unwrap_or(NONE)
    }

    /// How many tokens byte-pair encoding makes of one piece the pattern split off:
    /// the same merges, in the same order (lowest rank first, leftmost among equals),
    /// as tiktoken's `byte_pair_encode`.
    pub(super) fn count(&self, piece: &[u8]) -> u64 {
        match piece.len() {
            0 | 1 => piece.len() as u64,
            _ if self.rank(piece).is_some() => 1,
            len if len < 100 => self.merge_short(piece),
            _ => self.merge_long(piece),
        }
    }

    /// The merges on a list of parts: quadratic, and quickest for short pieces.
    fn merge_short(&self, piece: &[u8]) -> u64 {
        // (where a part starts, the rank of it merged with the next part)
        let mut parts: Vec<(usize, u32)> = Vec::with_capacity(piece.len() + 1);
        let mut lowest = (NONE, usize::MAX);
        for i in 0..piece.len() - 1 {
            let rank = self.pair(&piece[i..i + 2]);
            if rank < lowest.0 {
                lowest = (rank, i);
            }
            parts.push((i, rank));
        }
        parts.push((piece.len() - 1, NONE));
        parts.push((piece.len(), NONE));
        // Part `i` merged with part `i + 1`, while part `i + 1` is still listed.
        let merged = |parts: &[(usize, u32)], i: usize| match parts.get(i + 3) {
            Some(&(end, _)) => self.pair(&piece[parts[i].0..end]),
            None => NONE,
        };
        while lowest.0 != NONE {
            let i = lowest.1;
            if i > 0 {
                parts[i - 1].1 = merged(&parts, i - 1);
            }
            parts[i].1 = merged(&parts, i);
            parts.remove(i + 1);
            lowest = (NONE, usize::MAX);
            for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < lowest.0 {
                    lowest = (rank, i);
                }
            }
        }
        (parts.len() - 1) as u64
    }

    /// The merges through a heap, for long pieces (a run of a million letters would
    /// take hours on the list).
    fn merge_long(&self, piece: &[u8]) -> u64 {
        /// A part, as a linked list over the piece's bytes: its previous part, its end,
        /// and the end and rank of it merged with the next part.
        struct Part {
            prev: usize,
            end: usize,
            next_end: usize,
            next_rank: u32,
        }
        let mut parts: Vec<Part> = Vec::with_capacity(piece.len());
        parts.push(Part {
            prev: usize::MAX,
            end: 1,
            next_end: 2,
            next_rank: NONE,
        });
        let mut heap = BinaryHeap::with_capacity(piece.len());
        for i in 0..piece.len() - 1 {
            if let Some(rank) = self.rank(&piece[i..i + 2]) {
                heap.push(Reverse((rank, i)));
                parts[i].next_rank = rank;
            }
            parts.push(Part {
                prev: i,
                end: i + 2,
                next_end: i + 3,
                next_rank: NONE,
            });
        }
        let propose =
            |parts: &mut [Part], heap: &mut BinaryHeap<Reverse<(u32, usize)>>, start: usize, end: usize| {
                parts[start].next_end = end;
                parts[start].next_rank = NONE;
                if end <= piece.len()
                    && let Some(rank) = self.rank(&piece[start..end])
                {
                    heap.push(Reverse((rank, start)));
                    parts[start].next_rank = rank;
                }
            };
        while let Some(Reverse((rank, left))) = heap.pop() {
            // A merge made stale by an earlier one.
            if rank != parts[left].next_rank {
                continue;
            }
            let right = parts[left].end;
            let right_end = parts[left].next_end;
            let right_next_end = parts[right].next_end;
            parts[left].end = right_end;
            propose(&mut parts, &mut heap, left, right_next_end);
            if right_end < parts.len() {
                parts[right_end].prev = left;
            }
            if left > 0 {
                let prev = parts[left].prev;
                propose(&mut parts, &mut heap, prev, right_end);
            }
            parts[right].next_rank = NONE;
        }
        let mut tokens = 0;
        let mut at = 0;
        while at < parts.len() {
            tokens += 1;
            at = parts[at].end;
        }
        tokens
    }
}
