//! The environment variables miniagent reads, as one value handed to whatever reads them
//! (configuration, the key, the data and config folders, colours), so tests and front
//! ends pass their own and nothing reads the process environment behind their back.

use std::sync::Arc;

/// Looks one variable up.
type Lookup = dyn Fn(&str) -> Option<String> + Send + Sync;

/// Where variables are looked up; cheap to clone.
#[derive(Clone)]
pub struct Env(Arc<Lookup>);

impl Env {
    /// The process's own environment.
    pub fn process() -> Self {
        Self::with(|name| std::env::var(name).ok())
    }

    /// Variables looked up by `lookup` (tests: a fixed set).
    pub fn with(lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        Env(Arc::new(lookup))
    }

    /// No variables at all.
    pub fn empty() -> Self {
        Self::with(|_| None)
    }

    /// The value of `name`, if set.
    pub fn var(&self, name: &str) -> Option<String> {
        (self.0)(name)
    }
}

/// The process's own environment.
impl Default for Env {
    fn default() -> Self {
        Self::process()
    }
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Env")
    }
}
