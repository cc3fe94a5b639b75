//! MCP servers whose tools would take too much of every prompt. Past a share of the
//! prompt budget, the largest servers' tools are kept out of the requests ("deferred"),
//! and the model finds the ones it needs with [`SEARCH_TOOL`], which declares them from
//! its next step on, as Claude Code does for large MCP tool sets. Without this a server
//! listing ten thousand tools made every turn fail before its first request.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::tool::McpTool;
use crate::tools::{Tool, ToolContext, ToolEffect, ToolOutput};

/// The search tool's name (no server's tool can have it: theirs start with `mcp__`).
pub const SEARCH_TOOL: &str = "search_mcp_tools";

/// Bytes of a declaration counted as one token: the estimate miniagent makes wherever it
/// does not tokenize (a tool list is read at every request; tokenizing ten thousand
/// schemas each time is what must not happen).
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
    /// Called once each time a server's tools become deferred, with a line saying so.
    pub on_notice: Arc<dyn Fn(String) + Send + Sync>,
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
    /// Tools found by searches (name, declaration bytes), oldest first.
    found: VecDeque<(String, usize)>,
}

impl Deferral {
    pub fn set_share(&mut self, share: ToolShare) {
        self.share = Some(share);
    }

    fn share_bytes(&self) -> Option<usize> {
        let tokens = usize::try_from(self.share.as_ref()?.tokens).unwrap_or(usize::MAX);
        Some(tokens.saturating_mul(BYTES_PER_TOKEN))
    }

    /// Room for the tools searches found, besides the servers sent whole: half the
    /// share, so found tools cannot grow the prompt past it either.
    fn room(&self) -> usize {
        self.share_bytes().map_or(usize::MAX, |share| share / 2)
    }

    /// Which servers are deferred now, and the found tools to offer; announces each
    /// server newly deferred.
    pub fn plan(&mut self, servers: &[ServerTools]) -> Plan {
        let deferred = match self.share_bytes() {
            Some(share) => deferred_servers(servers, share),
            None => BTreeSet::new(),
        };
        let now: BTreeSet<String> = deferred
            .iter()
            .map(|index| servers[*index].name.clone())
            .collect();
        if let Some(share) = &self.share {
            for index in &deferred {
                let server = &servers[*index];
                if !self.announced.contains(&server.name) {
                    (share.on_notice)(notice(server, share.tokens));
                }
            }
        }
        self.announced = now;
        let found = self
            .found
            .iter()
            .filter_map(|(name, _)| deferred_tools(servers, &deferred).find(|tool| tool.name() == name))
            .cloned()
            .collect();
        Plan { deferred, found }
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
            if tool.spec_bytes() > room {
                lines.push(format!(
                    "- {}: its declaration is {} bytes, more than the {room} bytes found tools may take, so it cannot be offered: {description}",
                    tool.name(),
                    tool.spec_bytes()
                ));
                continue;
            }
            self.keep_found(tool.name(), tool.spec_bytes(), room);
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

    fn keep_found(&mut self, name: &str, bytes: usize, room: usize) {
        self.found.retain(|(kept, _)| kept != name);
        self.found.push_back((name.to_string(), bytes));
        while self.found.iter().map(|(_, bytes)| bytes).sum::<usize>() > room {
            self.found.pop_front();
        }
    }
}

/// The query as the answer repeats it: a long one is cut (the model has it anyway).
fn shown(query: &str) -> String {
    crate::tools::output::cap_text(query.trim(), 200)
}

/// The servers to defer: none while all tools fit in `share` bytes, else the largest
/// servers, one by one, until the others' do.
fn deferred_servers(servers: &[ServerTools], share: usize) -> BTreeSet<usize> {
    let mut sizes: Vec<(usize, usize)> = servers
        .iter()
        .enumerate()
        .map(|(index, server)| (server.bytes(), index))
        .collect();
    let mut total: usize = sizes.iter().map(|(bytes, _)| bytes).sum();
    sizes.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut deferred = BTreeSet::new();
    for (bytes, index) in sizes {
        if total <= share || bytes == 0 {
            break;
        }
        deferred.insert(index);
        total -= bytes;
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

/// What the person is told when a server's tools are deferred.
fn notice(server: &ServerTools, share_tokens: u64) -> String {
    let count = server.tools.len();
    format!(
        "MCP server `{}` lists {count} tool{}, about {} tokens of declarations, more than the {share_tokens} tokens (a quarter of the prompt budget) every request may spend on MCP tools: they are not sent with every request; the model finds the ones it needs with {SEARCH_TOOL}",
        crate::terminal_text::clean(&server.name),
        if count == 1 { "" } else { "s" },
        server.bytes().div_ceil(BYTES_PER_TOKEN),
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

impl Tool for SearchTool {
    fn name(&self) -> &str {
        SEARCH_TOOL
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words from the tool's name or what it does, or its exact name"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                          "description": format!("How many tools to find (default {DEFAULT_LIMIT})")}
            },
            "required": ["query"]
        })
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::ReadOnly
    }

    fn run(&self, arguments: Value, _context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        let query = arguments["query"].as_str().unwrap_or_default().to_string();
        let limit = arguments["limit"]
            .as_u64()
            .and_then(|limit| usize::try_from(limit).ok())
            .unwrap_or(DEFAULT_LIMIT);
        Box::pin(async move { self.deferred.search(&query, limit) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::mcp::config::{McpServerConfig, parse_config};
    use crate::tools::mcp::tool::ToolServer;
    use pretty_assertions::assert_eq;
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
        let text = json!({"mcpServers": {name: {"command": "x"}}}).to_string();
        let config = parse_config(&text, "test").unwrap().servers.remove(0);
        let nowhere: Arc<dyn ToolServer> = Arc::new(Nowhere(config));
        let tools = (0..count)
            .map(|i| {
                let remote: rmcp::model::Tool = serde_json::from_value(json!({
                    "name": format!("t{i}"), "description": format!("tool {i}"),
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
        let servers = [server("a", 10), server("b", 100), server("c", 50)];
        let bytes: Vec<usize> = servers.iter().map(ServerTools::bytes).collect();
        let total: usize = bytes.iter().sum();
        assert_eq!(deferred_servers(&servers, total), BTreeSet::new());
        assert_eq!(deferred_servers(&servers, total - 1), BTreeSet::from([1]));
        assert_eq!(deferred_servers(&servers, bytes[0]), BTreeSet::from([1, 2]));
        assert_eq!(
            deferred_servers(&servers, bytes[0] - 1),
            BTreeSet::from([0, 1, 2])
        );
    }

    /// Each deferral is told once, and again only after it ended and came back; found
    /// tools are offered until newer finds need their room.
    #[test]
    fn deferral_is_told_once_and_found_tools_give_way_oldest_first() {
        let told = Arc::new(Mutex::new(Vec::new()));
        let mut deferral = Deferral::default();
        let sink = told.clone();
        let big = server("big", 100);
        let one = big.tools[0].spec_bytes();
        deferral.set_share(ToolShare {
            // Room for found tools (half the share) holds two of them.
            tokens: (one * 5).div_ceil(BYTES_PER_TOKEN) as u64,
            on_notice: Arc::new(move |message| sink.lock().unwrap().push(message)),
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
    }
}
