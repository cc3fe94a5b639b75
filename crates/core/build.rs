//! Writes the token tables of the two encodings the agent counts with (cl100k_base,
//! o200k_base) into `OUT_DIR`, from tiktoken-rs's own encodings, in the layout of
//! `src/tokens/layout.rs`. The binary includes them as they are: building tiktoken's
//! tables at run time took about a quarter of a short `exec`'s CPU and ~10 MB of heap.

// A build script fails by panicking, with the message saying what was missing.
#![allow(clippy::expect_used)]

#[path = "src/tokens/layout.rs"]
mod layout;

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/tokens/layout.rs");
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    let cl100k = tiktoken_rs::cl100k_base().expect("tiktoken-rs builds cl100k_base");
    write_table(&cl100k, &out.join("cl100k_base.ranks"));
    let o200k = tiktoken_rs::o200k_base().expect("tiktoken-rs builds o200k_base");
    write_table(&o200k, &out.join("o200k_base.ranks"));
}

/// Every ordinary token of `bpe` in rank order (ranks run from 0 without a gap up to the
/// special tokens), then the table.
fn write_table(bpe: &tiktoken_rs::CoreBPE, path: &Path) {
    let special = bpe.special_tokens();
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    while let Ok(bytes) = bpe.decode_bytes(&[tokens.len() as u32]) {
        if std::str::from_utf8(&bytes).is_ok_and(|text| special.contains(text)) {
            break;
        }
        tokens.push(bytes);
    }
    assert!(tokens.len() > 50_000, "an encoding has its tokens");
    let slots_len = layout::slots_for(tokens.len());
    let mut slots = vec![0u32; slots_len];
    for (rank, token) in tokens.iter().enumerate() {
        let mut slot = layout::hash(token) as usize & (slots_len - 1);
        while slots[slot] != 0 {
            slot = (slot + 1) & (slots_len - 1);
        }
        slots[slot] = rank as u32 + 1;
    }
    let mut table: Vec<u8> = Vec::new();
    let mut word = |value: usize| table.extend(u32::try_from(value).expect("fits u32").to_le_bytes());
    word(tokens.len());
    word(slots_len);
    let mut offset = 0;
    word(0);
    for token in &tokens {
        offset += token.len();
        word(offset);
    }
    for slot in slots {
        word(slot as usize);
    }
    for token in &tokens {
        table.extend(token);
    }
    std::fs::write(path, table).expect("OUT_DIR is writable");
}
