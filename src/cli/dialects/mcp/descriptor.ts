import { DEFAULT_DRAIN_TIMEOUT_MS } from "../../../gateway/drain.js";
import { mcpGatewayDialect } from "./gateway.js";
import { McpServer } from "../../../mcp/server.js";
import { mcpRegistry } from "../../../registry/mcp/index.js";
import { MCP_RELAY } from "./relay.js";
import { attachMcpJsonRpc } from "../../../transports/mcp-jsonrpc.js";
import { STDIO_LIMIT_USAGE } from "../../limit-settings.js";
import { RECORD_FILE_USAGE } from "../../record-settings.js";
import { REMOTE_USAGE } from "../../remote.js";
import { bridgeSettings, envName, SESSION_KEEPING_USAGE, STDIO_HOST_USAGE, STORE_USAGE } from "../../settings.js";
import type { DialectDescriptor } from "../descriptor.js";
import { serveStdioEndpoint } from "../stdio-endpoint.js";

const USAGE = `usage: tau-gateway mcp [options]

A Model Context Protocol server on stdin/stdout, for MCP hosts that spawn one (Claude Desktop,
Cursor, VS Code, agent frameworks): Tau sessions as tools (tau, tau-reply, tau-sessions,
tau-history, tau-interrupt, tau-answer) and their transcripts as resources. Newline-delimited
JSON-RPC, logs on stderr as JSON lines. Ends when stdin closes or on SIGTERM/SIGINT, once calls in
flight are answered (a turn still running after --drain-timeout, or at a second signal, is
interrupted). With the OTEL_* variables set it exports a span of every call, as serve does.

${STDIO_HOST_USAGE}
  --default-cwd DIR             working directory of sessions started without one (default: current) ${envName("default-cwd")}
  --workspace-root DIR          confine session working directories to DIR and below; repeatable
                                (the variable takes DIR:DIR…; default: unconfined) ${envName("workspace-root")}
${SESSION_KEEPING_USAGE}
${STORE_USAGE}
  --drain-timeout MS            time a tool call in flight gets once input ends (default ${DEFAULT_DRAIN_TIMEOUT_MS}) ${envName("drain-timeout")}
${STDIO_LIMIT_USAGE}
${RECORD_FILE_USAGE}
${REMOTE_USAGE}
  --log-level LEVEL             fatal|error|warn|info|debug|trace|silent (default warn) ${envName("log-level")}`;

const { defaultCwd, workspaceRoots } = bridgeSettings;

/** How long the calls of interrupted turns get to be answered before the process goes on stopping. */
const INTERRUPTED_ANSWERS_MS = 5_000;
const settings = { defaultCwd, workspaceRoots };

/** The Model Context Protocol, server side: Streamable HTTP \`/mcp\` and WebSocket \`/mcp/ws\` on the gateway; \`tau-gateway mcp\`, which hosts spawn. */
export const mcpDialect: DialectDescriptor<McpServer, typeof settings> = {
  registry: mcpRegistry,
  createSurface: (context) =>
    new McpServer({ core: context.core, serverVersion: context.serverVersion, defaultCwd: context.defaultCwd, workspaceRoots: context.workspaceRoots, log: context.log }),
  closeSurface: (server) => server.close(),
  gateway: (server, { name, route }) => mcpGatewayDialect(server, { name, route }),
  command: {
    usage: USAGE,
    settings,
    relay: MCP_RELAY,
    serve: (server, run) =>
      serveStdioEndpoint(run, "MCP", (gate) => (send, transport) => attachMcpJsonRpc(server, send, { gate, transport }), {
        // Nothing more is read once the host closed its input or a signal came; the turns of tool
        // calls still running after the drain time are interrupted, and their calls answered with
        // how the turn ended.
        readsWhileDraining: false,
        interrupts: "in-flight",
        interrupt: (endpoint) => endpoint.interruptCalls(),
        answersMs: INTERRUPTED_ANSWERS_MS,
      }),
  },
};
