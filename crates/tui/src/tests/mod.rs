//! The workbench's own tests: sequences of agent events, keys, pastes and clicks applied
//! to an [`App`](crate::app::App), what its handlers asked the event loop to do, and every
//! pane and overlay drawn on ratatui's `TestBackend` (snapshots in `snapshots/`). They
//! live in the crate so that its modules need not be public; the real binary in tmux is
//! tested at the top level (`tests/tmux_workbench.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

/// Compares a drawn screen with `snapshots/<prefix>__<name>.snap`.
macro_rules! assert_screen_in {
    ($prefix:literal, $name:literal, $value:expr $(,)?) => {
        insta::with_settings!({
            snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/src/tests/snapshots"),
            prepend_module_to_snapshot => false,
        }, {
            insta::assert_snapshot!(concat!($prefix, "__", $name), $value);
        })
    };
}

pub mod support;

mod bad_input;
mod demo;
mod docs_tables;
mod extensions;
mod sessions;
mod workbench;
