//! What the handlers share: the settings, the token, the session store, and the live
//! sessions by id.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use miniagent_api::{Env, ServeSettings, ServeToken, SessionStore, StartOptions};

use crate::session::Live;

pub struct AppState {
    pub settings: ServeSettings,
    pub token: ServeToken,
    pub env: Env,
    /// The options the server was started with (for `/ready`).
    pub base: StartOptions,
    pub store: SessionStore,
    /// The address the server listens on (its own `Host`).
    pub local: SocketAddr,
    registry: Mutex<Registry>,
}

#[derive(Default)]
pub struct Registry {
    pub live: HashMap<String, Arc<Live>>,
    /// Sessions being started, counted against `max_sessions`.
    pub starting: usize,
    /// Recorded sessions being resumed, so two clients cannot resume one twice.
    pub resuming: HashSet<String>,
    /// For the ids of sessions that are not recorded.
    pub unrecorded: u64,
}

impl AppState {
    pub fn new(
        settings: ServeSettings,
        token: ServeToken,
        env: Env,
        base: StartOptions,
        local: SocketAddr,
    ) -> Self {
        let store = SessionStore::new(&env);
        Self {
            settings,
            token,
            env,
            base,
            store,
            local,
            registry: Mutex::new(Registry::default()),
        }
    }

    pub fn registry(&self) -> MutexGuard<'_, Registry> {
        // Every change to the registry is one step: a poisoned lock holds consistent data.
        self.registry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The live session `id`, if there is one.
    pub fn live(&self, id: &str) -> Option<Arc<Live>> {
        self.registry().live.get(id).cloned()
    }
}

/// A place among `max_sessions`, given back when dropped unless the session took it.
pub struct Slot {
    state: Arc<AppState>,
}

impl Slot {
    /// A place, when fewer than `max_sessions` are open or starting.
    pub fn take(state: &Arc<AppState>) -> Option<Self> {
        let mut registry = state.registry();
        if registry.live.len() + registry.starting >= state.settings.max_sessions {
            return None;
        }
        registry.starting += 1;
        Some(Self {
            state: Arc::clone(state),
        })
    }

    /// The session `live` takes the place.
    pub fn fill(self, live: Arc<Live>) {
        let mut registry = self.state.registry();
        registry.live.insert(live.facts.id.clone(), live);
        // `Drop` gives the starting count back.
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut registry = self.state.registry();
        registry.starting = registry.starting.saturating_sub(1);
    }
}
