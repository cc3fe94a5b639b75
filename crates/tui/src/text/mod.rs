//! Turning text into styled terminal lines: markdown, syntax highlighting, ANSI colour
//! sequences, unified diffs, and wrapping by display width.

pub mod ansi;
pub mod diff;
pub mod highlight;
pub mod markdown;
pub mod wrap;
