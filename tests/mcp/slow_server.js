// A minimal MCP server over stdio for tests: it answers `initialize` only after
// SLOW_MCP_DELAY_MS milliseconds (never, when that is "never"), then lists one tool,
// `echo`, which returns its `message`. With SLOW_MCP_TOOLS_FILE it lists the tools named
// in that file, one a line, as read when it started (so a new list needs a new server).
const delay = process.env.SLOW_MCP_DELAY_MS || "0";
const toolsFile = process.env.SLOW_MCP_TOOLS_FILE;
const names = toolsFile
  ? require("fs").readFileSync(toolsFile, "utf8").split("\n").filter((name) => name)
  : ["echo"];
let buffered = "";

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

function answer(request) {
  if (request.id === undefined) {
    return; // a notification
  }
  switch (request.method) {
    case "initialize":
      if (delay === "never") {
        return;
      }
      setTimeout(() => send({
        jsonrpc: "2.0",
        id: request.id,
        result: {
          protocolVersion: request.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "slow", version: "1.0.0" },
        },
      }), Number(delay));
      return;
    case "tools/list":
      send({
        jsonrpc: "2.0",
        id: request.id,
        result: {
          tools: names.map((name) => ({
            name,
            description: "Echoes back the message",
            inputSchema: {
              type: "object",
              properties: { message: { type: "string" } },
              required: ["message"],
            },
          })),
        },
      });
      return;
    case "tools/call":
      send({
        jsonrpc: "2.0",
        id: request.id,
        result: { content: [{ type: "text", text: request.params.name + ": " + request.params.arguments.message }] },
      });
      return;
    default:
      send({ jsonrpc: "2.0", id: request.id, error: { code: -32601, message: "no such method" } });
  }
}

process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, newline).trim();
    buffered = buffered.slice(newline + 1);
    if (line) {
      answer(JSON.parse(line));
    }
  }
});
process.stdin.on("end", () => process.exit(0));
