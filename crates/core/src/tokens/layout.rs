//! The layout of the token tables `build.rs` writes from tiktoken's encodings, shared by
//! the build script (which includes this file by path) and the reader in `ranks.rs`, so
//! both hash a token the same way.
//!
//! A table is little-endian `u32`s, then bytes: the number of tokens `N`, the number of
//! hash slots `S` (a power of two, at least twice `N`), `N + 1` offsets into the token
//! bytes (token `r` is `bytes[offsets[r]..offsets[r + 1]]`), `S` slots (`0` empty, else
//! the rank plus one, placed by [`hash`] with linear probing), then every token's bytes
//! in rank order.

/// The slots a table of `tokens` tokens has: at most half full, so a probe for a
/// missing piece ends after a slot or two.
pub fn slots_for(tokens: usize) -> usize {
    (tokens * 2).next_power_of_two()
}

/// A token's hash: its bytes read eight at a time as little-endian words, the same on
/// every platform (the table is built on the host and read on the target).
pub fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut hash = (bytes.len() as u64).wrapping_mul(K);
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        hash = (hash.rotate_left(23) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    hash ^ (hash >> 29)
}
