//! The `miniagent` command line.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use miniagent::api;
use miniagent::config::{ApprovalMode, Overrides, Provider};
use miniagent::exec::{self, ExecOutcome, OutputMode};
use miniagent::session_cli::{self as cli, ExportFormat};
use miniagent::startup::{self, StartOptions};
use miniagent::terminal_text;
use miniagent::tools::sandbox::SandboxSetting;

/// A terminal workbench for an LLM agent that reads and edits files, runs commands and
/// keeps going on long tasks. With no command, the full-screen workbench opens.
#[derive(Parser, Debug)]
#[command(name = "miniagent", version)]
struct Cli {
    #[command(flatten)]
    agent: AgentOptions,
    #[command(flatten)]
    look: LookOptions,
    /// Continue a recorded session: the newest one of this workspace, or session ID.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    resume: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

/// Options of the commands that run the agent (the workbench and `exec`). Not global:
/// `sessions` and `replay` run no agent, and their help lists only what applies to them.
/// Given before `exec` they apply to it as well.
#[derive(Args, Debug, Default)]
struct AgentOptions {
    /// The folder the agent works in (default: the current directory).
    #[arg(short = 'w', long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// A config file layered over the user's config.toml.
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    config: Option<PathBuf>,
    /// The model provider's protocol.
    #[arg(long, value_enum)]
    provider: Option<Provider>,
    /// The provider's base URL.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The model name.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// The environment variable that holds the API key.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// What may run without asking.
    #[arg(long, value_enum)]
    approval: Option<ApprovalMode>,
    /// Model calls per turn before the agent stops and reports.
    #[arg(long, value_name = "N")]
    max_steps: Option<u32>,
    /// The Landlock sandbox for commands (writes only under the workspace and the temp
    /// dir); `off` lets full-auto run them unsandboxed, the other modes always sandbox.
    #[arg(long, value_enum)]
    sandbox: Option<SandboxSetting>,
    /// Trust this workspace: use its .miniagent/mcp.json (remembered for next time).
    #[arg(long)]
    trust_workspace: bool,
    /// An MCP servers file (the mcpServers format), instead of <config dir>/mcp.json.
    #[arg(long, value_name = "FILE")]
    mcp_config: Option<PathBuf>,
}

impl AgentOptions {
    /// These options, with those given before the command's name filling the gaps.
    fn or(self, outer: AgentOptions) -> AgentOptions {
        AgentOptions {
            workspace: self.workspace.or(outer.workspace),
            config: self.config.or(outer.config),
            provider: self.provider.or(outer.provider),
            base_url: self.base_url.or(outer.base_url),
            model: self.model.or(outer.model),
            api_key_env: self.api_key_env.or(outer.api_key_env),
            approval: self.approval.or(outer.approval),
            max_steps: self.max_steps.or(outer.max_steps),
            sandbox: self.sandbox.or(outer.sandbox),
            trust_workspace: self.trust_workspace || outer.trust_workspace,
            mcp_config: self.mcp_config.or(outer.mcp_config),
        }
    }
}

/// Options of the commands that draw the workbench.
#[derive(Args, Debug, Default)]
struct LookOptions {
    /// The workbench's colour theme (dark, light, high-contrast, or your own).
    #[arg(long, value_name = "NAME")]
    theme: Option<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one prompt without the workbench: progress on stderr, the answer on stdout.
    Exec {
        #[command(flatten)]
        agent: AgentOptions,
        /// Print every event as one JSON line on stdout instead.
        #[arg(long)]
        json: bool,
        /// Continue recorded session ID (an id, a unique prefix of one, or a .jsonl file).
        #[arg(long, value_name = "ID")]
        resume: Option<String>,
        /// The task; `-` reads it from standard input.
        prompt: String,
    },
    /// Play a recorded session back in the workbench, with no model and no network.
    Replay {
        #[command(flatten)]
        look: LookOptions,
        /// Print the session as `exec` would have, instead of opening the workbench.
        #[arg(long)]
        headless: bool,
        /// A session log (.jsonl), or a recorded session's id.
        file: String,
    },
    /// List, show, export and remove recorded sessions.
    Sessions {
        /// Without one, `list`: this workspace's recorded sessions.
        #[command(subcommand)]
        command: Option<SessionsCommand>,
    },
}

#[derive(Subcommand, Debug)]
enum SessionsCommand {
    /// Recorded sessions, newest first, under a header; the id is the first field.
    List {
        /// Also list sessions that never got a reply (marked so).
        #[arg(long)]
        all: bool,
    },
    /// A session's details and its conversation.
    Show {
        /// A session id, a unique prefix of one, or a .jsonl file.
        id: String,
    },
    /// A session as markdown (the conversation, tool calls folded) or JSON (the history
    /// the model saw), on stdout.
    Export {
        id: String,
        #[arg(long, value_enum, default_value = "md")]
        format: ExportFormat,
    },
    /// Remove a recorded session (never one a running miniagent has open).
    Rm {
        /// A session id or a unique prefix of one.
        id: String,
    },
    /// Remove the sessions last used longer ago than DURATION, after listing them.
    Prune {
        /// How old: a number and a unit, such as 30d, 12h, 90m or 2w.
        #[arg(long, value_name = "DURATION")]
        older_than: String,
        /// Remove without asking.
        #[arg(long)]
        yes: bool,
        /// Only list what would be removed.
        #[arg(long)]
        dry_run: bool,
    },
}

fn main() {
    miniagent::hardening::start();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { 1 } else { 0 };
            let _ = err.print();
            std::process::exit(code);
        }
    };
    // The one view of the environment everything below reads.
    let env = api::Env::process();
    std::process::exit(run(cli, &env));
}

/// What the agent starts with.
fn start_options(agent: AgentOptions) -> StartOptions {
    StartOptions {
        workspace: agent.workspace,
        config_file: agent.config,
        mcp_config: agent.mcp_config,
        trust_workspace: agent.trust_workspace,
        overrides: Overrides {
            provider: agent.provider,
            base_url: agent.base_url,
            model: agent.model,
            api_key_env: agent.api_key_env,
            approval: agent.approval,
            max_steps: agent.max_steps,
            sandbox: agent.sandbox,
        },
    }
}

fn run(cli: Cli, env: &api::Env) -> i32 {
    match cli.command {
        None => {
            let start = start_options(cli.agent);
            let resume = match cli.resume.as_deref() {
                Some(id) => match startup::resume_target(&start, Some(id).filter(|id| !id.is_empty()), env) {
                    // The workbench asks when the log is from elsewhere.
                    Ok(target) => Some(target.path),
                    Err(err) => {
                        terminal_text::eprintln(&format!("miniagent: {err:#}"));
                        return 1;
                    }
                },
                None => None,
            };
            miniagent::tui::run(miniagent::tui::WorkbenchOptions {
                start,
                env: env.clone(),
                theme: cli.look.theme,
                resume,
            })
        }
        Some(Command::Exec {
            agent,
            json,
            resume,
            prompt,
        }) => {
            let start = start_options(agent.or(cli.agent));
            let resume = match resume.as_deref() {
                Some(id) => match startup::resume_target(&start, Some(id), env)
                    .and_then(|target| target.check_for_exec(&start).map(|()| target))
                {
                    Ok(target) => Some(target.path),
                    Err(err) => {
                        terminal_text::eprintln(&format!("miniagent: {err:#}"));
                        return 1;
                    }
                },
                None => None,
            };
            run_exec(&start, json, resume, prompt, env)
        }
        Some(Command::Replay {
            headless: true, file, ..
        }) => cli::replay_headless(&file, env),
        Some(Command::Replay {
            look,
            headless: false,
            file,
        }) => miniagent::tui::replay(&file, look.theme.or(cli.look.theme), env),
        Some(Command::Sessions { command }) => {
            match command.unwrap_or(SessionsCommand::List { all: false }) {
                SessionsCommand::List { all } => cli::list(all, env),
                SessionsCommand::Show { id } => cli::show(&id, env),
                SessionsCommand::Export { id, format } => cli::export(&id, format, env),
                SessionsCommand::Rm { id } => cli::remove(&id, env),
                SessionsCommand::Prune {
                    older_than,
                    yes,
                    dry_run,
                } => cli::prune(&older_than, yes, dry_run, env),
            }
        }
    }
}

fn run_exec(
    start: &StartOptions,
    json: bool,
    resume: Option<PathBuf>,
    prompt: String,
    env: &api::Env,
) -> i32 {
    let prompt = if prompt == "-" {
        let mut text = String::new();
        if let Err(err) = std::io::stdin().read_to_string(&mut text) {
            terminal_text::eprintln(&format!(
                "miniagent: cannot read the prompt from standard input: {err}"
            ));
            return 1;
        }
        text
    } else {
        prompt
    };
    if prompt.trim().is_empty() {
        terminal_text::eprintln("miniagent: the prompt is empty");
        return 1;
    }
    // Errors are one line on stderr; their whole chain goes to the log.
    api::start_logging(env);
    let outcome = api::block_on(async {
        let agent = match api::start(start, env) {
            Ok(agent) => agent,
            Err(err) => {
                terminal_text::eprintln(&format!("miniagent: {err:#}"));
                return ExecOutcome::Failed;
            }
        };
        let mode = if json {
            OutputMode::Json
        } else {
            let no_color = env.var("NO_COLOR").is_some_and(|v| !v.is_empty());
            OutputMode::Human {
                color: std::io::stderr().is_terminal() && !no_color,
            }
        };
        exec::run(agent, resume, prompt, mode).await
    });
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(why) => {
            terminal_text::eprintln(&format!("miniagent: {why}"));
            return 1;
        }
    };
    outcome.exit_code()
}
