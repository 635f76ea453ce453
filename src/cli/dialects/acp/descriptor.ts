import { AcpAgent } from "../../../acp/agent.js";
import { DEFAULT_DRAIN_TIMEOUT_MS } from "../../../gateway/drain.js";
import { acpRegistry } from "../../../registry/acp/index.js";
import { attachAcpJsonRpc } from "../../../transports/acp-jsonrpc.js";
import { STDIO_LIMIT_USAGE } from "../../limit-settings.js";
import { RECORD_FILE_USAGE } from "../../record-settings.js";
import { REMOTE_USAGE } from "../../remote.js";
import { envName, SESSION_KEEPING_USAGE, STDIO_HOST_USAGE, STORE_USAGE } from "../../settings.js";
import { ACP_RELAY } from "./relay.js";
import type { DialectDescriptor } from "../descriptor.js";
import { serveStdioEndpoint } from "../stdio-endpoint.js";

const USAGE = `usage: tau-gateway acp [options]

An Agent Client Protocol (ACP v1) agent on stdin/stdout, for editors that spawn one (Zed's
agent_servers, acpx, …): newline-delimited JSON-RPC, logs on stderr as JSON lines. Ends when
stdin closes or on SIGTERM/SIGINT, once requests in flight are answered (a prompt still running
after --drain-timeout, or at a second signal, is interrupted). With the OTEL_* variables set it exports a span of every
call, as serve does (docs/operations.md).

${STDIO_HOST_USAGE}
${SESSION_KEEPING_USAGE}
${STORE_USAGE}
  --drain-timeout MS            time a prompt in flight gets once input ends (default ${DEFAULT_DRAIN_TIMEOUT_MS}) ${envName("drain-timeout")}
${STDIO_LIMIT_USAGE}
${RECORD_FILE_USAGE}
${REMOTE_USAGE}
  --log-level LEVEL             fatal|error|warn|info|debug|trace|silent (default warn) ${envName("log-level")}`;

/** The Agent Client Protocol, agent side: WebSocket `/acp` on the gateway; `tau-gateway acp`, which editors spawn. */
export const acpDialect: DialectDescriptor<AcpAgent, Record<never, never>> = {
  registry: acpRegistry,
  createSurface: (context) =>
    new AcpAgent({
      core: context.core,
      serverVersion: context.serverVersion,
      commandTools: context.commandTools,
      workspaceRoots: context.workspaceRoots,
      log: context.log,
    }),
  // Turns of ACP clients still running are interrupted while Tau can still hear it.
  closeSurface: (agent) => agent.close(),
  gateway: (agent, { name, route }) => ({
    name,
    route,
    // When the socket closes, the connection's turns still running get the agent's grace period, then are interrupted.
    open: ({ tenant, principal, gate }) => (send, transport) => attachAcpJsonRpc(agent, send, { tenant, principal, gate, transport }),
    binaryReason: "ACP requires text messages",
  }),
  command: {
    usage: USAGE,
    // Every ACP session names its own cwd: no --default-cwd, no --workspace-root.
    settings: {},
    relay: ACP_RELAY,
    // A signal ends the input as EOF would: work in flight is answered (or interrupted, at once on a
    // second signal), then the process exits.
    serve: (agent, run) =>
      serveStdioEndpoint(run, "ACP", (gate) => (send, transport) => attachAcpJsonRpc(agent, send, { gate, transport }), {
        // Input is still read while the prompts in flight finish (a new request is refused as
        // retryable, a cancel is heard); prompts still running then are interrupted and answered
        // `cancelled`, so no turn outlives the process.
        readsWhileDraining: true,
        interrupts: "in-flight",
        interrupt: (endpoint, budgetMs) => endpoint.interruptTurns(budgetMs),
      }),
  },
};
