//! Drives the agent library against a [`ScriptedServer`]: builds a session for either
//! provider and collects its events.

use std::sync::Arc;
use std::time::Duration;

use miniagent_core::agent::{self, AgentHandle, AgentOptions};
use miniagent_core::config::{self, ApprovalMode, Config, LoadOptions, Overrides, Provider};
use miniagent_core::tools::ToolRegistry;
use miniagent_protocol::{Event, Op};

use super::{ScriptedServer, TempDir};

/// The key the tests send; asserted in headers and never expected in events.
pub const TEST_KEY: &str = "sk-test-0123456789";

/// The built-in configuration pointed at `server`, with fast retries.
pub fn test_config(provider: Provider, server: &ScriptedServer) -> Config {
    let mut config = config::load(&LoadOptions {
        config_dir: None,
        config_file: None,
        overrides: Overrides::default(),
        env: &miniagent_core::config::Env::empty(),
    })
    .expect("built-in config loads");
    config.model.provider = provider;
    config.model.base_url = match provider {
        Provider::Anthropic => server.anthropic_base_url(),
        _ => server.openai_base_url(),
    };
    config.model.model = "scripted-model".to_string();
    config.retry.initial_delay_ms = 10;
    config.retry.max_delay_ms = 50;
    config.agent.approval = ApprovalMode::FullAuto;
    config
}

/// A session log in `data`'s `sessions` folder, created at the first turn, with a header
/// naming the scripted model.
pub fn session_log_in(data: &TempDir) -> miniagent_core::session::SessionLog {
    let header = miniagent_core::session::Header {
        id: String::new(),
        created: "2026-11-22T00:00:00Z".into(),
        workspace: "w".into(),
        model: "scripted-model".into(),
        provider: "anthropic".into(),
        version: "test".into(),
        format: miniagent_core::session::FORMAT,
        fixed_tokens: 0,
    };
    miniagent_core::session::SessionLog::create(&data.join("sessions"), header, Default::default())
}

/// A running agent, its workspace and its event log.
pub struct Harness {
    pub handle: AgentHandle,
    pub workspace: TempDir,
    /// The data folder: large results are saved in its `results/<session id>`
    /// (`results/unrecorded` when the session is not recorded).
    pub data: TempDir,
    pub events: Vec<Event>,
}

impl Harness {
    pub fn start(config: Config) -> Harness {
        Self::start_recorded(config, miniagent_core::session::SessionLog::disabled())
    }

    /// [`Harness::start`], recording the session in `log`.
    pub fn start_recorded(config: Config, log: miniagent_core::session::SessionLog) -> Harness {
        Self::start_with(config, log, Vec::new())
    }

    /// [`Harness::start_recorded`] with `extra` tools besides the built-in ones.
    pub fn start_with(
        config: Config,
        log: miniagent_core::session::SessionLog,
        extra: Vec<Arc<dyn miniagent_core::tools::Tool>>,
    ) -> Harness {
        let mut tools = ToolRegistry::builtin(&config);
        for tool in extra {
            tools.register(tool);
        }
        Self::start_with_registry(config, log, tools)
    }

    /// [`Harness::start_recorded`] with the tools of `tools` (sources included).
    pub fn start_with_registry(
        config: Config,
        log: miniagent_core::session::SessionLog,
        tools: ToolRegistry,
    ) -> Harness {
        Self::start_in(config, log, TempDir::new(), TempDir::new(), tools)
    }

    /// A session in an earlier harness's `workspace` and `data` folders (a resume that
    /// finds what the first session kept there).
    pub fn start_in(
        config: Config,
        log: miniagent_core::session::SessionLog,
        workspace: TempDir,
        // Large results are saved here, as in a data folder's results/.
        data: TempDir,
        tools: ToolRegistry,
    ) -> Harness {
        let results = data.join("results");
        let client =
            miniagent_core::llm::build_client(&config.model, TEST_KEY.to_string()).expect("client builds");
        let options = AgentOptions {
            system_prompt: "You are a test agent.".to_string(),
            instructions: Default::default(),
            skills_prompt: String::new(),
            commands: Default::default(),
            workspace: workspace.path().to_path_buf(),
            read_roots: Vec::new(),
            mcp: None,
            startup_notices: Vec::new(),
            side_events: std::sync::Mutex::new(None),
            client: Arc::clone(&client),
            tools,
            config,
            session_log: log,
            secrets: miniagent_core::secrets::Secrets::new(vec![TEST_KEY.to_string()]),
            protected: Vec::new(),
            results: Some(results),
            client_files: None,
            hooks: Default::default(),
            models: Some(Arc::new(miniagent_core::startup::KeyedModels::new(
                miniagent_core::config::Env::empty(),
            ))),
            checkpoints: Some(data.join("checkpoints")),
        };
        Harness {
            handle: agent::spawn(options),
            workspace,
            data,
            events: Vec::new(),
        }
    }

    /// A session in `workspace` started as every face starts one (start-up builds it:
    /// skills, MCP servers, miniagent's own folders under `folders`), untrusted.
    pub fn start_up(
        config: Config,
        workspace: TempDir,
        folders: &std::path::Path,
        mcp: Option<miniagent_core::tools::mcp::McpConfig>,
    ) -> Harness {
        let named = own_folders(folders);
        let env = miniagent_core::config::Env::with(move |name: &str| {
            named
                .iter()
                .find(|(variable, _)| *variable == name)
                .map(|(_, folder)| folder.display().to_string())
        });
        let options = miniagent_core::startup::build(
            config,
            workspace.path().to_path_buf(),
            TEST_KEY.into(),
            mcp,
            false,
            &env,
        )
        .expect("the session starts");
        Harness {
            handle: agent::spawn(options),
            workspace,
            data: TempDir::new(),
            events: Vec::new(),
        }
    }

    pub fn send(&self, op: Op) {
        self.handle.ops.send(op).expect("agent is running");
    }

    /// Waits for the next event (10 s at most), records and returns it.
    pub async fn next(&mut self) -> Event {
        let event = tokio::time::timeout(Duration::from_secs(10), self.handle.events.recv())
            .await
            .unwrap_or_else(|_| panic!("no event within 10 s; so far: {:#?}", self.events))
            .expect("event channel open");
        self.events.push(event.clone());
        event
    }

    /// Waits for the first event matching `pred` and returns it.
    pub async fn wait_for(&mut self, pred: impl Fn(&Event) -> bool) -> Event {
        loop {
            let event = self.next().await;
            if pred(&event) {
                return event;
            }
        }
    }

    /// Asks for the history inspector's snapshot and waits for it.
    pub async fn inspect(&mut self) -> miniagent_protocol::HistorySnapshot {
        self.send(Op::InspectHistory);
        match self
            .wait_for(|e| matches!(e, Event::HistorySnapshot { .. }))
            .await
        {
            Event::HistorySnapshot { snapshot } => snapshot,
            _ => unreachable!("waited for a snapshot"),
        }
    }

    /// Sends a user message and collects events until the turn ends; returns them.
    pub async fn turn(&mut self, text: &str) -> Vec<Event> {
        let start = self.events.len();
        self.send(Op::UserInput {
            text: text.to_string(),
        });
        self.wait_for(is_turn_end).await;
        self.events[start..].to_vec()
    }
}

/// The variables naming miniagent's folders, each under `dir`: `config`, `data`, `logs`.
pub fn own_folders(dir: &std::path::Path) -> [(&'static str, std::path::PathBuf); 3] {
    [
        ("MINIAGENT_CONFIG_DIR", dir.join("config")),
        ("MINIAGENT_DATA_DIR", dir.join("data")),
        ("MINIAGENT_LOG_DIR", dir.join("logs")),
    ]
}

/// Whether the event ends a turn.
pub fn is_turn_end(event: &Event) -> bool {
    matches!(
        event,
        Event::TurnComplete { .. }
            | Event::TurnAborted { .. }
            | Event::StepLimitReached { .. }
            | Event::Error { .. }
    )
}

/// The concatenated text deltas among `events`.
pub fn streamed_text(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

/// The concatenated thinking deltas among `events`.
pub fn streamed_thinking(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ThinkingDelta { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}
