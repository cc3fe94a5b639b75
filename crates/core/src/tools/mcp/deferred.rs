//! MCP servers whose tools would take too much of every prompt. Past a share of the
//! prompt budget, the largest servers' tools are kept out of the requests ("deferred"),
//! and the model finds the ones it needs with [`SEARCH_TOOL`], which declares them from
//! its next step on, as Claude Code does for large MCP tool sets. Without this a server
//! listing ten thousand tools made every turn fail before its first request.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::tool::McpTool;
use crate::tools::{Tool, ToolContext, ToolEffect, ToolOutput, TypedTool};
use miniagent_protocol::DeferredServer;

/// The search tool's name (no server's tool can have it: theirs start with `mcp__`).
pub const SEARCH_TOOL: &str = "search_mcp_tools";

/// Bytes of a declaration counted as one token by the first estimate: a server that is
/// over the share by it is deferred without being tokenized (ten thousand schemas are
/// not worth it). One under it is counted with the tokenizer, since a token is at least
/// one byte and text dense in tokens (rare symbols) can take four times the estimate.
const BYTES_PER_TOKEN: usize = 4;
/// Tools one search finds when the model does not say, and at most.
const DEFAULT_LIMIT: usize = 5;
const MAX_LIMIT: usize = 10;
/// Words of a query looked for; the rest are left out.
const MAX_TERMS: usize = 16;
/// A found tool's description in the search's answer is cut here; the whole of it comes
/// with the tool's declaration.
const DESCRIPTION_BYTES: usize = 300;

/// How much of every prompt the MCP tools may take, and who hears when some are deferred.
#[derive(Clone)]
pub struct ToolShare {
    /// Tokens the declarations of the MCP tools sent with every request may take.
    pub tokens: u64,
    /// Counts a declaration's tokens as the budget does; `None`: by estimate only.
    pub counter: Option<crate::tokens::TokenCounter>,
    /// Called once each time a server's tools become deferred, with a line saying so.
    pub on_notice: Arc<dyn Fn(String) + Send + Sync>,
    /// Called with the servers deferred now and the tools found of each, whenever that
    /// changes: front ends show it beside the server's tools.
    pub on_deferred: Arc<dyn Fn(Vec<DeferredServer>) + Send + Sync>,
}

/// One server's tools as they are now (none unless it is ready).
pub(super) struct ServerTools {
    pub name: String,
    pub tools: Vec<Arc<McpTool>>,
}

impl ServerTools {
    fn bytes(&self) -> usize {
        self.tools.iter().map(|tool| tool.spec_bytes()).sum()
    }
}

/// Tokens of `bytes` by the first estimate.
fn estimate(bytes: usize) -> u64 {
    bytes.div_ceil(BYTES_PER_TOKEN) as u64
}

/// What the tool list offers now.
pub(super) struct Plan {
    /// Indices (into the servers given) of the servers whose tools are deferred.
    pub deferred: BTreeSet<usize>,
    /// Tools of deferred servers that searches found, offered too.
    pub found: Vec<Arc<McpTool>>,
}

/// The share, and what the session did with it.
#[derive(Default)]
pub(super) struct Deferral {
    share: Option<ToolShare>,
    /// Servers whose deferral was announced (and still holds).
    announced: BTreeSet<String>,
    /// Tools found by searches (name, declaration tokens), oldest first.
    found: VecDeque<(String, u64)>,
    /// What `on_deferred` was last told.
    reported: Vec<DeferredServer>,
}

impl Deferral {
    pub fn set_share(&mut self, share: ToolShare) {
        self.share = Some(share);
    }

    /// Room (in tokens) for the tools searches found, besides the servers sent whole:
    /// half the share, so found tools cannot grow the prompt past it either.
    fn room(&self) -> u64 {
        self.share.as_ref().map_or(u64::MAX, |share| share.tokens / 2)
    }

    /// A tool's tokens, counted when there is a counter.
    fn tool_tokens(&self, tool: &McpTool) -> u64 {
        match self.share.as_ref().and_then(|share| share.counter) {
            Some(counter) => tool.spec_tokens(&counter),
            None => estimate(tool.spec_bytes()),
        }
    }

    /// A server's tokens: the estimate when that is over `share` already, else counted.
    fn server_tokens(&self, server: &ServerTools, share: u64) -> u64 {
        let estimated = estimate(server.bytes());
        if estimated > share {
            return estimated;
        }
        server.tools.iter().map(|tool| self.tool_tokens(tool)).sum()
    }

    /// Which servers are deferred now, and the found tools to offer; announces each
    /// server newly deferred.
    pub fn plan(&mut self, servers: &[ServerTools]) -> Plan {
        let (deferred, sizes) = match &self.share {
            Some(share) => {
                let sizes: Vec<u64> = servers
                    .iter()
                    .map(|server| self.server_tokens(server, share.tokens))
                    .collect();
                (deferred_servers(&sizes, share.tokens), sizes)
            }
            None => (BTreeSet::new(), Vec::new()),
        };
        let now: BTreeSet<String> = deferred
            .iter()
            .map(|index| servers[*index].name.clone())
            .collect();
        if let Some(share) = &self.share {
            for index in &deferred {
                let server = &servers[*index];
                if !self.announced.contains(&server.name) {
                    (share.on_notice)(notice(server, sizes[*index], share.tokens));
                }
            }
        }
        self.announced = now;
        // One pass over the deferred tools, not one per find: finds keep the order they
        // were made in, so a new one leaves the earlier ones' place in the prompt.
        let found: Vec<(usize, Arc<McpTool>)> = if self.found.is_empty() {
            Vec::new()
        } else {
            let by_name: HashMap<&str, (usize, &Arc<McpTool>)> = deferred
                .iter()
                .flat_map(|index| {
                    servers[*index]
                        .tools
                        .iter()
                        .map(|tool| (tool.name(), (*index, tool)))
                })
                .collect();
            self.found
                .iter()
                .filter_map(|(name, _)| {
                    by_name
                        .get(name.as_str())
                        .map(|(index, tool)| (*index, Arc::clone(tool)))
                })
                .collect()
        };
        self.report(servers, &deferred, &found);
        let found = found.into_iter().map(|(_, tool)| tool).collect();
        Plan { deferred, found }
    }

    /// Tells `on_deferred` what is deferred and found now, when that changed.
    fn report(
        &mut self,
        servers: &[ServerTools],
        deferred: &BTreeSet<usize>,
        found: &[(usize, Arc<McpTool>)],
    ) {
        let Some(share) = &self.share else { return };
        let now: Vec<DeferredServer> = deferred
            .iter()
            .map(|index| DeferredServer {
                server: servers[*index].name.clone(),
                found: found
                    .iter()
                    .filter(|(server, _)| server == index)
                    .map(|(_, tool)| tool.name().to_string())
                    .collect(),
            })
            .collect();
        if now != self.reported {
            (share.on_deferred)(now.clone());
            self.reported = now;
        }
    }

    /// Finds up to `limit` deferred tools for `query`, declares them from the next
    /// request on (the oldest found ones give way when the room is full), and says which
    /// to the model.
    pub fn search(&mut self, servers: &[ServerTools], query: &str, limit: usize) -> ToolOutput {
        let plan = self.plan(servers);
        if plan.deferred.is_empty() {
            return ToolOutput::error(
                "no MCP server's tools are deferred now: every MCP tool is declared already",
            );
        }
        let mut terms: Vec<String> = Vec::new();
        for term in query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|term| !term.is_empty())
        {
            let term = term.to_lowercase();
            if !terms.contains(&term) {
                terms.push(term);
            }
            // Each word is looked for in every deferred tool: a query of a million words
            // must not cost a million passes over ten thousand tools.
            if terms.len() == MAX_TERMS {
                break;
            }
        }
        if terms.is_empty() {
            return ToolOutput::error("`query` must hold words from the tool's name or what it does");
        }
        let mut ranked: Vec<(Rank, &Arc<McpTool>)> = deferred_tools(servers, &plan.deferred)
            .filter_map(|tool| rank(tool, query.trim(), &terms).map(|rank| (rank, tool)))
            .collect();
        // Best first; equal ones in the server's own order (the sort is stable).
        ranked.sort_by_key(|(rank, _)| std::cmp::Reverse(*rank));
        let limit = limit.clamp(1, MAX_LIMIT);
        let room = self.room();
        let mut lines = Vec::new();
        for (_, tool) in ranked.iter().take(limit) {
            let description = crate::tools::output::cap_text(tool.description(), DESCRIPTION_BYTES);
            let description = description.replace('\n', " ");
            let tokens = self.tool_tokens(tool);
            if tokens > room {
                lines.push(format!(
                    "- {}: its declaration is about {tokens} tokens, more than the {room} found tools may take, so it cannot be offered: {description}",
                    tool.name(),
                ));
                continue;
            }
            self.keep_found(tool.name(), tokens, room);
            lines.push(format!("- {}: {description}", tool.name()));
        }
        let servers_named = plan
            .deferred
            .iter()
            .map(|index| {
                format!(
                    "`{}` ({} tools)",
                    servers[*index].name,
                    servers[*index].tools.len()
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        if lines.is_empty() {
            return ToolOutput::ok(format!(
                "No deferred tool of {servers_named} matches `{}`; try other words.",
                shown(query)
            ));
        }
        let more = ranked.len().saturating_sub(limit);
        let more = if more > 0 {
            format!("\n{more} more match; a narrower query finds them.")
        } else {
            String::new()
        };
        ToolOutput::ok(format!(
            "Tools of {servers_named} that match `{}`; they are declared from your next step on, so call them then by these names:\n{}{more}",
            shown(query),
            lines.join("\n")
        ))
    }

    fn keep_found(&mut self, name: &str, tokens: u64, room: u64) {
        self.found.retain(|(kept, _)| kept != name);
        self.found.push_back((name.to_string(), tokens));
        while self.found.iter().map(|(_, tokens)| tokens).sum::<u64>() > room {
            self.found.pop_front();
        }
    }
}

/// The query as the answer repeats it: a long one is cut (the model has it anyway).
fn shown(query: &str) -> String {
    crate::tools::output::cap_text(query.trim(), 200)
}

/// The servers to defer, given each one's tokens: none while all fit in `share`, else
/// the largest servers, one by one, until the others fit.
fn deferred_servers(sizes: &[u64], share: u64) -> BTreeSet<usize> {
    let mut order: Vec<(u64, usize)> = sizes.iter().copied().zip(0..).collect();
    let mut total: u64 = sizes.iter().sum();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut deferred = BTreeSet::new();
    for (tokens, index) in order {
        if total <= share || tokens == 0 {
            break;
        }
        deferred.insert(index);
        total -= tokens;
    }
    deferred
}

fn deferred_tools<'a>(
    servers: &'a [ServerTools],
    deferred: &'a BTreeSet<usize>,
) -> impl Iterator<Item = &'a Arc<McpTool>> {
    deferred.iter().flat_map(|index| servers[*index].tools.iter())
}

/// How well a tool answers a query, best highest: its exact name first, then the number
/// of words found, then how many of them are in its name.
type Rank = (bool, usize, usize);

/// `tool`'s [`Rank`] for the query; `None` when no word is found.
fn rank(tool: &McpTool, query: &str, terms: &[String]) -> Option<Rank> {
    let exact = tool.name() == query || tool.remote_name() == query;
    let name = format!("{} {}", tool.name(), tool.remote_name()).to_lowercase();
    let description = tool.description().to_lowercase();
    let in_name = terms.iter().filter(|term| name.contains(term.as_str())).count();
    let found = terms
        .iter()
        .filter(|term| name.contains(term.as_str()) || description.contains(term.as_str()))
        .count();
    (exact || found > 0).then_some((exact, found, in_name))
}

/// What the person is told when a server's tools are deferred (`tokens`: their size).
fn notice(server: &ServerTools, tokens: u64, share_tokens: u64) -> String {
    let count = server.tools.len();
    format!(
        "MCP server `{}` lists {count} tool{}, about {} tokens of declarations, more than the {share_tokens} tokens (a quarter of the prompt budget) every request may spend on MCP tools: they are not sent with every request; the model finds the ones it needs with {SEARCH_TOOL}",
        miniagent_text::clean(&server.name),
        if count == 1 { "" } else { "s" },
        tokens,
    )
}

/// Where the search tool finds the deferred tools (the manager). A trait here, so this
/// module does not import the manager that offers the tool.
pub(super) trait Deferred: Send + Sync {
    fn search(&self, query: &str, limit: usize) -> ToolOutput;
}

/// [`SEARCH_TOOL`]: offered while some server's tools are deferred.
pub(super) struct SearchTool {
    description: String,
    deferred: Arc<dyn Deferred>,
}

impl SearchTool {
    /// `servers`: the deferred servers' names and tool counts, which its description names.
    pub fn new(servers: &[(String, usize)], deferred: Arc<dyn Deferred>) -> Self {
        let servers = servers
            .iter()
            .map(|(name, count)| format!("{name} ({count} tools)"))
            .collect::<Vec<_>>()
            .join(", ");
        Self {
            description: format!(
                "Finds tools of MCP servers that have too many to declare in every request: {servers}. \
                 Give words from the tool's name or from what it does (or its exact name). The tools found \
                 are declared from your next step on; call them then by the names this returns."
            ),
            deferred,
        }
    }
}

/// [`SEARCH_TOOL`]'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct SearchArgs {
    /// Words from the tool's name or what it does, or its exact name
    query: String,
    /// How many tools to find (default 5)
    #[serde(default, deserialize_with = "crate::tools::typed::whole_number")]
    #[schemars(range(min = 1, max = MAX_LIMIT))]
    limit: Option<u64>,
}

impl TypedTool for SearchTool {
    type Args = SearchArgs;

    fn name(&self) -> &str {
        SEARCH_TOOL
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::ReadOnly
    }

    fn kind(&self) -> miniagent_protocol::ToolKind {
        miniagent_protocol::ToolKind::Search
    }

    fn run(&self, args: SearchArgs, _context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        // A count past the largest is the largest (the search clamps it).
        let limit = args.limit.map_or(DEFAULT_LIMIT, |limit| {
            usize::try_from(limit).unwrap_or(usize::MAX)
        });
        Box::pin(async move { self.deferred.search(&args.query, limit) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::mcp::config::{McpServerConfig, parse_config};
    use crate::tools::mcp::tool::ToolServer;
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};
    use std::sync::Mutex;

    /// A server the tools belong to; nothing is called in these tests.
    struct Nowhere(McpServerConfig);

    impl ToolServer for Nowhere {
        fn config(&self) -> &McpServerConfig {
            &self.0
        }

        fn call<'a>(&'a self, _: &'a str, _: Value, _: ToolContext) -> BoxFuture<'a, ToolOutput> {
            Box::pin(async { ToolOutput::error("not called") })
        }
    }

    fn server(name: &str, count: usize) -> ServerTools {
        server_described(name, count, "tool")
    }

    fn server_described(name: &str, count: usize, description: &str) -> ServerTools {
        let text = json!({"mcpServers": {name: {"command": "x"}}}).to_string();
        let config = parse_config(&text, "test").unwrap().servers.remove(0);
        let nowhere: Arc<dyn ToolServer> = Arc::new(Nowhere(config));
        let tools = (0..count)
            .map(|i| {
                let remote: rmcp::model::Tool = serde_json::from_value(json!({
                    "name": format!("t{i}"), "description": format!("{description} {i}"),
                    "inputSchema": {"type": "object"}
                }))
                .unwrap();
                Arc::new(McpTool::new(
                    format!("mcp__{name}__t{i}"),
                    &remote,
                    nowhere.clone(),
                ))
            })
            .collect();
        ServerTools {
            name: name.to_string(),
            tools,
        }
    }

    #[test]
    fn the_largest_servers_are_deferred_until_the_others_fit() {
        let sizes = [10, 100, 50];
        assert_eq!(deferred_servers(&sizes, 160), BTreeSet::new());
        assert_eq!(deferred_servers(&sizes, 159), BTreeSet::from([1]));
        assert_eq!(deferred_servers(&sizes, 10), BTreeSet::from([1, 2]));
        assert_eq!(deferred_servers(&sizes, 9), BTreeSet::from([0, 1, 2]));
    }

    /// A server under the share by the byte estimate but over it by the tokenizer (text
    /// dense in tokens) is deferred too: the estimate alone let it fill the prompt.
    #[test]
    fn a_server_dense_in_tokens_is_counted_not_estimated() {
        let dense = server_described("dense", 40, &"\u{2a6d6}\u{1d54f}\u{2ff0}".repeat(20));
        let counter = crate::tokens::TokenCounter::new(crate::tokens::Encoding::O200kBase);
        let estimated = estimate(dense.bytes());
        let counted: u64 = dense.tools.iter().map(|tool| tool.spec_tokens(&counter)).sum();
        assert!(counted > estimated * 2, "{counted} tokens, estimated {estimated}");
        let mut deferral = Deferral::default();
        deferral.set_share(ToolShare {
            tokens: estimated + 1,
            counter: Some(counter),
            on_notice: Arc::new(|_| {}),
            on_deferred: Arc::new(|_| {}),
        });
        assert_eq!(deferral.plan(&[dense]).deferred, BTreeSet::from([0]));
    }

    /// Each deferral is told once, and again only after it ended and came back; found
    /// tools are offered until newer finds need their room.
    #[test]
    fn deferral_is_told_once_and_found_tools_give_way_oldest_first() {
        let told = Arc::new(Mutex::new(Vec::new()));
        let reported = Arc::new(Mutex::new(Vec::new()));
        let mut deferral = Deferral::default();
        let sink = told.clone();
        let reports = reported.clone();
        let big = server("big", 100);
        let one = big.tools[0].spec_bytes();
        deferral.set_share(ToolShare {
            // Room for found tools (half the share) holds two of them.
            tokens: estimate(one) * 5,
            counter: None,
            on_notice: Arc::new(move |message| sink.lock().unwrap().push(message)),
            on_deferred: Arc::new(move |servers| reports.lock().unwrap().push(servers)),
        });
        let servers = [big];
        assert_eq!(deferral.plan(&servers).deferred, BTreeSet::from([0]));
        assert_eq!(deferral.plan(&servers).deferred, BTreeSet::from([0]));
        assert_eq!(told.lock().unwrap().len(), 1);
        for query in ["t1", "t2", "t3"] {
            let output = deferral.search(&servers, &format!("mcp__big__{query}"), 1);
            assert!(!output.is_error, "{}", output.content);
        }
        let found: Vec<String> = deferral
            .plan(&servers)
            .found
            .iter()
            .map(|tool| tool.name().to_string())
            .collect();
        assert_eq!(found, ["mcp__big__t2", "mcp__big__t3"]);
        assert_eq!(deferral.plan(&[]).deferred, BTreeSet::new());
        deferral.plan(&servers);
        assert_eq!(told.lock().unwrap().len(), 2);
        // Front ends hear of each change whole, once: a find shows from the plan that
        // offers it (the model's next step), and a server gone takes its deferral along.
        let big = |found: &[&str]| {
            vec![DeferredServer {
                server: "big".into(),
                found: found.iter().map(|name| format!("mcp__big__{name}")).collect(),
            }]
        };
        assert_eq!(
            *reported.lock().unwrap(),
            [
                big(&[]),
                big(&["t1"]),
                big(&["t1", "t2"]),
                big(&["t2", "t3"]),
                vec![],
                big(&["t2", "t3"]),
            ]
        );
    }

    /// Records what the search tool asked for.
    #[derive(Default)]
    struct Asked(Mutex<Vec<(String, usize)>>);

    impl Deferred for Asked {
        fn search(&self, query: &str, limit: usize) -> ToolOutput {
            self.0.lock().unwrap().push((query.to_string(), limit));
            ToolOutput::ok("found")
        }
    }

    /// The generated schema is the one written by hand before it was generated, and the
    /// description names the deferred servers.
    #[test]
    fn the_search_tools_schema_is_the_hand_written_one() {
        let tool = SearchTool::new(&[("big".into(), 100)], Arc::new(Asked::default()));
        assert_eq!(
            Tool::input_schema(&tool),
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words from the tool's name or what it does, or its exact name"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                              "description": format!("How many tools to find (default {DEFAULT_LIMIT})")}
                },
                "required": ["query"]
            })
        );
        assert_eq!(
            Tool::description(&tool),
            "Finds tools of MCP servers that have too many to declare in every request: big (100 tools). \
             Give words from the tool's name or from what it does (or its exact name). The tools found \
             are declared from your next step on; call them then by the names this returns."
        );
    }

    /// The arguments are read once into their type: a count written `2.0` is 2 (it was
    /// the default before), none is the default, a huge one reaches the search (which
    /// clamps it), and a query that is not a string is refused, naming it.
    #[tokio::test]
    async fn the_search_tool_reads_its_arguments_into_its_type() {
        let asked = Arc::new(Asked::default());
        let tool = SearchTool::new(&[], asked.clone());
        let context = || ToolContext {
            workspace: Arc::new(crate::tools::paths::Workspace::new(&std::env::temp_dir(), &[])),
            cancel: tokio_util::sync::CancellationToken::new(),
            output: crate::tools::OutputSink::discard(),
            approval: crate::config::ApprovalMode::FullAuto,
            unasked: false,
            sub_agents: None,
            save_to: None,
        };
        for arguments in [
            json!({"query": "read files", "limit": 2.0}),
            json!({"query": "write"}),
            json!({"query": "all", "limit": 1e20}),
        ] {
            let output = Tool::run(&tool, arguments, context()).await;
            assert_eq!((output.content.as_str(), output.is_error), ("found", false));
        }
        let refused = Tool::run(&tool, json!({"query": 5}), context()).await;
        assert_eq!(
            (refused.content.as_str(), refused.is_error),
            ("`query`: invalid type: integer `5`, expected a string", true)
        );
        assert_eq!(
            *asked.0.lock().unwrap(),
            [
                ("read files".to_string(), 2),
                ("write".to_string(), DEFAULT_LIMIT),
                ("all".to_string(), usize::MAX),
            ]
        );
    }
}
