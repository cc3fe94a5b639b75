//! Key bindings as components describe them, so the help overlay and the bottom bar
//! are generated from the components themselves, never kept by hand.

/// One binding a component offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyHint {
    /// How the keys are written, e.g. `Enter`, `PgUp/PgDn`, `Ctrl-C`.
    pub keys: &'static str,
    /// What they do, short, e.g. `send`, `scroll`.
    pub action: &'static str,
}

impl KeyHint {
    pub const fn new(keys: &'static str, action: &'static str) -> Self {
        Self { keys, action }
    }
}
