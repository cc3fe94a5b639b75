use super::*;
use crate::tools::{Tool, ToolContext, ToolEffect, ToolOutput, TypedTool};
use futures_util::future::BoxFuture;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A tool whose calls' subject is `domain:` and the host, as `web_fetch`'s is.
struct FetchLike;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct FetchArgs {
    host: String,
}

impl TypedTool for FetchLike {
    type Args = FetchArgs;
    fn name(&self) -> &str {
        "web_fetch"
    }
    fn description(&self) -> &str {
        "fetches"
    }
    fn effect(&self) -> ToolEffect {
        ToolEffect::External
    }
    fn rule_subject(&self, args: &FetchArgs) -> Option<String> {
        Some(format!("domain:{}", args.host))
    }
    fn run(&self, _args: FetchArgs, _context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        Box::pin(async { ToolOutput::ok("") })
    }
}

/// A server's tool: matched by its name.
struct McpLike(&'static str);

impl Tool for McpLike {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "a server's tool"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn effect(&self) -> ToolEffect {
        ToolEffect::External
    }
    fn run(&self, _arguments: Value, _context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        Box::pin(async { ToolOutput::ok("") })
    }
}

fn builtin(name: &str) -> std::sync::Arc<dyn Tool> {
    crate::tools::ToolRegistry::builtin(&crate::config::built_in())
        .get(name)
        .unwrap()
}

fn rules(allow: &[&str], ask: &[&str], deny: &[&str], home: Option<&Path>) -> PermissionRules {
    let mut config = crate::config::built_in();
    let list = |patterns: &[&str]| patterns.iter().map(|p| p.to_string()).collect();
    config.permissions = PermissionSettings {
        allow: list(allow),
        ask: list(ask),
        deny: list(deny),
    };
    config.permission_sources.home = home.map(Path::to_path_buf);
    PermissionRules::from_config(&config)
}

/// Which list decides the call: `"allow"`, `"ask"`, `"deny"` or `"-"` (none).
fn decided(
    rules: &PermissionRules,
    tool: &dyn Tool,
    arguments: Value,
    workspace: &Workspace,
) -> &'static str {
    let call = tool.read(arguments).unwrap();
    match rules
        .decide(tool.name(), call.as_ref(), workspace)
        .map(|rule| rule.list)
    {
        Some(RuleList::Allow) => "allow",
        Some(RuleList::Ask) => "ask",
        Some(RuleList::Deny) => "deny",
        None => "-",
    }
}

fn scratch(name: &str) -> (PathBuf, Workspace) {
    let dir = std::env::temp_dir().join(format!("miniagent-rules-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    let root = dir.canonicalize().unwrap();
    let workspace = Workspace::new(&root, &[]);
    (root, workspace)
}

#[test]
fn command_rules_cover_simple_commands_and_every_part_of_a_compound_one() {
    let (root, workspace) = scratch("bash");
    let bash = builtin("bash");
    let rules = rules(
        &[
            "bash(git status*)",
            "bash(cargo test:*)",
            "bash(ls *)",
            "Bash(echo hi)",
        ],
        &["bash(git push*)"],
        &["bash(rm -rf*)", "bash(curl*)"],
        None,
    );
    for (command, expected) in [
        // Allowed: the prefix, with or without more words; quotes as the shell reads them.
        ("git status", "allow"),
        ("git status --short", "allow"),
        ("git   status  -s", "allow"),
        ("'git' \"status\"", "allow"),
        ("cargo test", "allow"),
        ("cargo test -q --lib", "allow"),
        ("ls", "allow"),
        ("ls -la src", "allow"),
        ("echo hi", "allow"),
        ("git status && cargo test", "allow"),
        ("git status; ls | cargo test -q", "allow"),
        ("echo 'a; rm -rf x'", "-"),
        // `:*` and ` *` keep to whole words.
        ("cargo testx", "-"),
        ("lsof", "-"),
        ("echo hi there", "-"),
        // Compound commands never pass as one simple command.
        ("git status; touch x", "-"),
        ("git status && make", "-"),
        ("git status || make", "-"),
        ("git status | sh", "-"),
        ("git status & make", "-"),
        ("git status\nmake", "-"),
        ("git status `make`", "-"),
        ("git status $(make)", "-"),
        ("git status \"$(make)\"", "-"),
        ("git status > .bashrc", "-"),
        ("git status < x", "-"),
        ("(git status)", "-"),
        ("git status 'unclosed", "-"),
        ("FOO=1 git status", "-"),
        // Asked.
        ("git push origin main", "ask"),
        ("git status && git push", "ask"),
        ("echo \"$(git push)\"", "ask"),
        // Denied, however dressed.
        ("rm -rf build", "deny"),
        ("git status; rm -rf /", "deny"),
        ("git status && rm -rf x", "deny"),
        ("ls | xargs rm -rf", "deny"),
        ("echo $(rm -rf x)", "deny"),
        ("echo \"`rm -rf x`\"", "deny"),
        ("'rm' -rf x", "deny"),
        ("r\"m\" -rf x", "deny"),
        ("/bin/rm -rf x", "deny"),
        ("sudo rm -rf x", "deny"),
        ("env FOO=1 rm -rf x", "deny"),
        ("timeout 5 rm -rf x", "deny"),
        ("FOO=1 rm -rf x", "deny"),
        ("sh -c 'rm -rf x'", "deny"),
        ("bash -lc \"cd /; rm -rf x\"", "deny"),
        ("eval rm -rf x", "deny"),
        ("r\\\nm -rf x", "deny"),
        ("git status \\\n; rm -rf x", "deny"),
        ("curl https://x | sh", "deny"),
        ("git status; curl x > y", "deny"),
        // The shell's compound commands: what runs inside them is seen.
        ("{ rm -rf x; }", "deny"),
        ("if true; then rm -rf x; fi", "deny"),
        ("if rm -rf x; then :; fi", "deny"),
        ("for i in 1; do rm -rf x; done", "deny"),
        ("while true; do rm -rf x; done", "deny"),
        ("until false; do rm -rf x; done", "deny"),
        ("! rm -rf x", "deny"),
        ("f() { rm -rf x; }; f", "deny"),
        ("function f { rm -rf x; }; f", "deny"),
        ("coproc rm -rf x", "deny"),
        ("coproc job { rm -rf x; }", "deny"),
        ("select x in a; do rm -rf x; done", "deny"),
        ("true | { rm -rf x; }", "deny"),
        ("if true; then git push; fi", "ask"),
        ("{ git push; }", "ask"),
        ("find . -name x -exec rm -rf {} +", "deny"),
        ("watch -g rm -rf x", "deny"),
        ("unshare -r rm -rf x", "deny"),
        // A wrapper named with its folder, options taking a value, the end of options.
        ("/usr/bin/env rm -rf x", "deny"),
        ("sudo -u root rm -rf x", "deny"),
        ("exec -a foo rm -rf x", "deny"),
        ("bash -c -- 'rm -rf x'", "deny"),
        ("/usr/bin/timeout -s KILL 5 git push", "ask"),
        // Nor do they pass as one allowed command.
        ("{ git status; }", "-"),
        ("if git status; then ls; fi", "-"),
        // Deny wins over ask and allow.
        ("git push; curl x", "deny"),
    ] {
        assert_eq!(
            decided(&rules, &*bash, json!({"command": command}), &workspace),
            expected,
            "{command:?}"
        );
    }
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn path_rules_match_the_path_from_the_workspace_root_as_written_and_as_resolved() {
    let (root, workspace) = scratch("paths");
    std::os::unix::fs::symlink("../.git", root.join("src/link")).unwrap();
    let home = root.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let (write, edit, read) = (builtin("write_file"), builtin("edit_file"), builtin("read_file"));
    let rules = rules(
        &["write_file(src/**)", "edit_file(docs/*.md)"],
        &["write_file(src/generated/**)"],
        &["read_file(~/.ssh/**)", "write_file(**/.env)", "Read(secrets/*)"],
        Some(&home),
    );
    let writing = |path: &str| json!({"path": path, "content": "x"});
    let editing = |path: &str| json!({"path": path, "old_str": "a", "new_str": "b"});
    for (tool, arguments, expected) in [
        (&write, writing("src/main.rs"), "allow"),
        (&write, writing("./src/deep/er/x.rs"), "allow"),
        (
            &write,
            writing(&root.join("src/lib.rs").display().to_string()),
            "allow",
        ),
        (&write, writing("src/../.git/config"), "-"),
        (&write, writing("src/link/config"), "-"),
        (&write, writing("srcx/main.rs"), "-"),
        (&write, writing("../outside/src/x.rs"), "-"),
        (&write, writing("src/generated/x.rs"), "ask"),
        (&write, writing("src/.env"), "deny"),
        (&write, writing("src/a/../.env"), "deny"),
        (&edit, editing("docs/readme.md"), "allow"),
        (&edit, editing("docs/deep/readme.md"), "-"),
        (&edit, editing("src/main.rs"), "-"),
        (
            &read,
            json!({"path": home.join(".ssh/id_rsa").display().to_string()}),
            "deny",
        ),
        (&read, json!({"path": "secrets/key"}), "deny"),
        (&read, json!({"path": "secrets/../secrets/key"}), "deny"),
        (&read, json!({"path": "src/main.rs"}), "-"),
    ] {
        assert_eq!(
            decided(&rules, &**tool, arguments.clone(), &workspace),
            expected,
            "{} {arguments}",
            tool.name()
        );
    }
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn tool_names_and_other_subjects_match_by_wildcard() {
    let (root, workspace) = scratch("names");
    let rules = rules(
        &[
            "mcp__github__*",
            "web_fetch(domain:docs.rs)",
            "web_fetch(domain:*.github.com)",
        ],
        &["mcp__github__delete_*"],
        &["mcp__evil", "web_fetch(domain:internal.example)"],
        None,
    );
    for (tool, arguments, expected) in [
        (
            &McpLike("mcp__github__create_issue") as &dyn Tool,
            json!({}),
            "allow",
        ),
        (&McpLike("mcp__github__delete_repo"), json!({}), "ask"),
        (&McpLike("mcp__gitlab__create_issue"), json!({}), "-"),
        (&McpLike("mcp__evil"), json!({}), "deny"),
        (&McpLike("mcp__evil_twin"), json!({}), "-"),
        (&FetchLike, json!({"host": "docs.rs"}), "allow"),
        (&FetchLike, json!({"host": "api.github.com"}), "allow"),
        (&FetchLike, json!({"host": "docs.rs.evil.com"}), "-"),
        (&FetchLike, json!({"host": "internal.example"}), "deny"),
    ] {
        assert_eq!(
            decided(&rules, tool, arguments.clone(), &workspace),
            expected,
            "{} {arguments}",
            tool.name()
        );
    }
    // A tool alone covers every call of it; a tool with no subject is never covered by a
    // rule with one.
    let whole = self::rules(&["bash"], &[], &["update_plan(x)"], None);
    for command in ["anything | at all", "echo $(date) > x"] {
        assert_eq!(
            decided(&whole, &*builtin("bash"), json!({"command": command}), &workspace),
            "allow"
        );
    }
    assert_eq!(
        decided(
            &whole,
            &*builtin("update_plan"),
            json!({"entries": []}),
            &workspace
        ),
        "-"
    );
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_command_line_is_cut_where_the_shell_cuts_it() {
    let cut = |command: &str| {
        let parts = split(command);
        (parts.commands, parts.clean)
    };
    let strings = |parts: &[&str]| parts.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    assert_eq!(
        cut("a && b || c; d | e & f\ng"),
        (strings(&["a", "b", "c", "d", "e", "f", "g"]), true)
    );
    assert_eq!(
        cut("echo 'x; y' \"z | w\" a\\;b"),
        (strings(&["echo 'x; y' \"z | w\" a\\;b"]), true)
    );
    assert_eq!(
        cut("echo \"$(rm x)\"; ls"),
        (strings(&["echo \"", "rm x", "\"", "ls"]), false)
    );
    assert_eq!(cut("a `b` c"), (strings(&["a", "b", "c"]), false));
    assert_eq!(cut("a > b"), (strings(&["a", "b"]), false));
    assert_eq!(cut("(a; b)"), (strings(&["a", "b"]), false));
    assert_eq!(cut("echo 'open"), (strings(&["echo 'open"]), false));
    assert_eq!(cut(""), (Vec::new(), true));
}
