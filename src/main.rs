//! The `miniagent` command line.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand};

use miniagent::exec::{self, ExecOutcome, OutputMode};
use miniagent::session_cli::{self as cli, ExportFormat};
use miniagent_api::{self as api, Overrides, Provider, StartOptions};
use miniagent_protocol::{ApprovalMode, SandboxSetting};
use miniagent_text as terminal_text;

/// A terminal workbench for an LLM agent that reads and edits files, runs commands and
/// keeps going on long tasks. With no command, the full-screen workbench opens.
#[derive(Parser, Debug)]
#[command(name = "miniagent", version)]
struct Cli {
    #[command(flatten)]
    agent: AgentOptions,
    #[command(flatten)]
    look: LookOptions,
    #[command(flatten)]
    session: ResumeOptions,
    /// A first message: the workbench opens and sends it.
    #[arg(value_name = "PROMPT")]
    prompt: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

/// Which recorded session to continue, in the workbench and in `exec`.
#[derive(Args, Debug, Default)]
struct ResumeOptions {
    /// Continue a recorded session: session ID (an id, a unique prefix of one, or a
    /// .jsonl file), or without ID the newest one of this workspace.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    resume: Option<String>,
    /// Continue the newest session recorded in this workspace.
    #[arg(long = "continue", conflicts_with = "resume")]
    continue_newest: bool,
}

impl ResumeOptions {
    /// These, or those given before the command's name when these name no session.
    fn or(self, outer: ResumeOptions) -> ResumeOptions {
        if self.resume.is_some() || self.continue_newest {
            self
        } else {
            outer
        }
    }

    /// The session asked for: `Some(None)` for this workspace's newest.
    fn wanted(&self) -> Option<Option<&str>> {
        match self.resume.as_deref() {
            Some("") => Some(None),
            Some(id) => Some(Some(id)),
            None => self.continue_newest.then_some(None),
        }
    }
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
    /// Start with the config's provider profile [profiles.NAME] (the flags above win over it).
    #[arg(long, value_name = "NAME")]
    profile: Option<String>,
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
            profile: self.profile.or(outer.profile),
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
        #[command(flatten)]
        session: ResumeOptions,
        /// The task; `-` reads it from standard input. Each `@path` in it (`@"a b.txt"`
        /// with spaces) naming a file in the workspace attaches that file's text (a large
        /// file by reference), as in the workbench.
        prompt: Option<String>,
    },
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed and others)
    /// that launch agents; each session's workspace is the folder the editor names.
    Acp {
        #[command(flatten)]
        agent: AgentOptions,
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
    /// Print a completion script for SHELL on stdout (for example
    /// `miniagent completions bash > ~/.local/share/bash-completion/completions/miniagent`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Serve sessions over HTTP, their events as server-sent events (see the README's
    /// "HTTP API"); the address and, unless set in the environment, the token are printed.
    Serve {
        #[command(flatten)]
        agent: AgentOptions,
        /// The address to listen on (default: serve.bind, 127.0.0.1:8420); the only way
        /// to listen beyond this machine.
        #[arg(long, value_name = "ADDR")]
        bind: Option<std::net::SocketAddr>,
        /// A folder a session's workspace must be in (repeatable; default: serve.roots,
        /// else the current folder).
        #[arg(long = "root", value_name = "DIR")]
        roots: Vec<PathBuf>,
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
    api::harden_process();
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
            profile: agent.profile,
        },
    }
}

fn run(cli: Cli, env: &api::Env) -> i32 {
    if let (Some(prompt), Some(_)) = (&cli.prompt, &cli.command) {
        return fail(&format!(
            "`{}` is not a command: a prompt goes after the command and its options (miniagent exec \"PROMPT\"), or alone for the workbench (miniagent \"PROMPT\")",
            terminal_text::visible(prompt)
        ));
    }
    if let Some(command) = cli.prompt.as_deref().and_then(mistyped_command) {
        return fail(&format!(
            "`{}` is not a command; did you mean `miniagent {command}`? (`miniagent --help` lists them; a prompt of more than one word opens the workbench with it)",
            terminal_text::visible(cli.prompt.as_deref().unwrap_or_default())
        ));
    }
    match cli.command {
        None => workbench(cli.agent, cli.look, cli.session, cli.prompt, env),
        Some(Command::Exec {
            agent,
            json,
            session,
            prompt,
        }) => {
            let start = start_options(agent.or(cli.agent));
            let session = session.or(cli.session);
            let prompt = match exec_prompt(&start, &session, prompt, env) {
                Ok(prompt) => prompt,
                Err(why) => return fail(&why),
            };
            let resume = match session.wanted() {
                Some(id) => match api::session_to_resume_unattended(&start, id, env) {
                    Ok(path) => Some(path),
                    Err(err) => return fail(&format!("{err:#}")),
                },
                None => None,
            };
            run_exec(&start, json, resume, prompt, env)
        }
        Some(Command::Acp { agent }) => {
            let agent = agent.or(cli.agent);
            if agent.workspace.is_some() {
                return fail(
                    "miniagent acp takes each session's workspace from the editor (the cwd of session/new); -w does not apply",
                );
            }
            miniagent_acp::run(start_options(agent), env)
        }
        Some(Command::Replay {
            headless: true, file, ..
        }) => cli::replay_headless(&file, env),
        Some(Command::Replay {
            look,
            headless: false,
            file,
        }) => miniagent_tui::replay(&file, look.theme.or(cli.look.theme), env),
        Some(Command::Completions { shell }) => {
            // Written whole once made: clap_complete panics on a reader that went away.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "miniagent", &mut script);
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(&script).and_then(|()| stdout.flush());
            0
        }
        Some(Command::Serve { agent, bind, roots }) => {
            let options = miniagent_serve::ServeOptions {
                start: start_options(agent.or(cli.agent)),
                bind,
                roots,
            };
            match miniagent_serve::run(options, env) {
                Ok(()) => 0,
                Err(why) => fail(&why.to_string()),
            }
        }
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

/// The command a one-word prompt is a slip of the keys for (`sesions`, `exce`): sent to the
/// model it would cost a call and mean nothing. Within two edits of a command's name.
fn mistyped_command(prompt: &str) -> Option<String> {
    let word = prompt.trim();
    if word.is_empty() || word.contains(char::is_whitespace) || word.chars().count() > 16 {
        return None;
    }
    let word = word.to_lowercase();
    Cli::command()
        .get_subcommands()
        .map(|command| command.get_name().to_string())
        .find(|name| *name == word || edit_distance(name, &word) <= if name.len() <= 4 { 1 } else { 2 })
}

/// Edits between two words (insert, delete, replace, or swap two neighbours), by
/// characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut table = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in table.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in table[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let replace = table[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1]);
            let mut best = replace.min(table[i - 1][j] + 1).min(table[i][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(table[i - 2][j - 2] + 1);
            }
            table[i][j] = best;
        }
    }
    table[a.len()][b.len()]
}

/// One line on stderr; exit code 1.
fn fail(why: &str) -> i32 {
    terminal_text::eprintln(&format!("miniagent: {why}"));
    1
}

/// The workbench, with the session to continue and the first message. Whether it can be
/// drawn here is known before anything else is done (text piped in is read after).
fn workbench(
    agent: AgentOptions,
    look: LookOptions,
    session: ResumeOptions,
    prompt: Option<String>,
    env: &api::Env,
) -> i32 {
    if let Err(why) = miniagent_tui::check_terminal(env.var("TERM").as_deref()) {
        return fail(&format!("{why}; to run without it: miniagent exec \"PROMPT\""));
    }
    let start = start_options(agent);
    let resume = match session.wanted() {
        // The workbench asks when the log is from elsewhere.
        Some(id) => match api::session_to_resume(&start, id, env) {
            Ok(path) => Some(path),
            // `miniagent --resume "fix the tests"` took the message as the id.
            Err(err) => match (id, &prompt) {
                (Some(id), None) => {
                    let id = terminal_text::visible(id);
                    return fail(&format!(
                        "{err:#}; --resume takes a session id, and to continue this workspace's newest session with a first message: miniagent --continue \"{id}\""
                    ));
                }
                _ => return fail(&format!("{err:#}")),
            },
        },
        None => None,
    };
    let prompt = match first_message(prompt) {
        Ok(prompt) => prompt,
        Err(why) => return fail(&why),
    };
    miniagent_tui::run(miniagent_tui::WorkbenchOptions {
        start,
        env: env.clone(),
        theme: look.theme,
        resume,
        prompt,
    })
}

/// The most text piped into the workbench that is taken as its first message: what its
/// input takes.
const PIPED_LIMIT: u64 = 1024 * 1024;

/// The workbench's first message: the prompt given, followed by any text piped in
/// (`git diff | miniagent "review this"`). Keys are read from the terminal meanwhile.
fn first_message(prompt: Option<String>) -> Result<Option<String>, String> {
    // An empty prompt (`miniagent ""`) is no message, as an empty input sends none.
    let prompt = prompt.filter(|prompt| !prompt.trim().is_empty());
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(prompt);
    }
    // A pipe that stays open (`tail -f log | miniagent`) would hold the workbench back
    // with nothing on screen: after a second, say what it waits for.
    let (waiting, read) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let waited = read.recv_timeout(std::time::Duration::from_secs(1));
        if waited == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            terminal_text::eprintln(
                "miniagent: waiting for the text piped in to end (it becomes the first message; Ctrl-C stops)",
            );
        }
    });
    let mut bytes = Vec::new();
    let result = stdin.lock().take(PIPED_LIMIT + 1).read_to_end(&mut bytes);
    drop(waiting);
    if let Err(err) = result {
        return Err(format!("cannot read the text piped in: {err}"));
    }
    if bytes.len() as u64 > PIPED_LIMIT {
        return Err(
            "the text piped in is over 1 MB, more than the workbench's input takes: save it to a file in the workspace and name the file in the prompt"
                .to_string(),
        );
    }
    let piped = String::from_utf8_lossy(&bytes);
    let piped = piped.trim_end();
    Ok(match (prompt, piped.trim().is_empty()) {
        (prompt, true) => prompt,
        (None, false) => Some(piped.to_string()),
        (Some(prompt), false) => Some(format!("{prompt}\n\n{piped}")),
    })
}

/// `exec`'s prompt, or what to type when it is missing: `exec --resume "turn 2"` takes the
/// text as the session id, so a missing prompt after an id that names no session says so.
fn exec_prompt(
    start: &StartOptions,
    session: &ResumeOptions,
    prompt: Option<String>,
    env: &api::Env,
) -> Result<String, String> {
    if let Some(prompt) = prompt {
        return Ok(prompt);
    }
    match session.resume.as_deref().filter(|id| !id.is_empty()) {
        Some(id) if api::session_to_resume(start, Some(id), env).is_err() => Err(format!(
            "`{}` is not a recorded session, and exec has no prompt: --resume takes a session id before the prompt (`miniagent sessions list` shows them), as in miniagent exec --resume ID \"PROMPT\"; to continue this workspace's newest session: miniagent exec --continue \"{}\"",
            terminal_text::visible(id),
            terminal_text::visible(id),
        )),
        Some(id) => Err(format!(
            "exec has no prompt: miniagent exec --resume {} \"PROMPT\"",
            terminal_text::visible(id)
        )),
        None => Err(
            "exec has no prompt: miniagent exec \"PROMPT\" (or - to read it from standard input)".to_string(),
        ),
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
        exec::run(agent, resume, prompt, mode, env).await
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
