import { CodexSurface } from "../../../codex/codex-surface.js";
import { DEFAULT_DRAIN_TIMEOUT_MS } from "../../../gateway/drain.js";
import { codexRegistry } from "../../../registry/codex/index.js";
import { attachCodexJsonRpc } from "../../../transports/codex-jsonrpc.js";
import { STDIO_LIMIT_USAGE } from "../../limit-settings.js";
import { RECORD_FILE_USAGE } from "../../record-settings.js";
import { REMOTE_USAGE } from "../../remote.js";
import { bridgeSettings, envName, SESSION_KEEPING_USAGE, STDIO_HOST_USAGE, STORE_USAGE } from "../../settings.js";
import { CODEX_RELAY } from "./relay.js";
import type { DialectDescriptor } from "../descriptor.js";
import { serveStdioEndpoint } from "../stdio-endpoint.js";

const USAGE = `usage: tau-gateway app-server [options]

Serves the Codex app-server protocol (v2) as newline-delimited JSON on stdin/stdout, so a client
that spawns "<codexPath> app-server" runs it when given the tau-gateway executable. A spawning
client passes no flags: every option is read from its environment variable too. Logs go to
stderr as JSON lines. Ends when stdin closes (once every request received is answered), or on
SIGTERM/SIGINT (requests in flight then get --drain-timeout to be answered, a second signal stops
waiting, and turns still running are interrupted, each reported with turn/completed, before the
output closes). With the OTEL_*
variables set it exports a span of every call, as serve does (docs/operations.md).

${STDIO_HOST_USAGE}
  --default-cwd DIR             working directory of threads started without one (default: current) ${envName("default-cwd")}
  --workspace-root DIR          confine thread working directories to DIR and below; repeatable
                                (the variable takes DIR:DIR…; default: unconfined) ${envName("workspace-root")}
${SESSION_KEEPING_USAGE}
  --drain-timeout MS            time requests in flight get once input ends (default ${DEFAULT_DRAIN_TIMEOUT_MS}) ${envName("drain-timeout")}
${STDIO_LIMIT_USAGE}
${RECORD_FILE_USAGE}
${STORE_USAGE}
${REMOTE_USAGE}
  --log-level LEVEL             fatal|error|warn|info|debug|trace|silent (default warn) ${envName("log-level")}`;

// Codex's wire never carries "jsonrpc", so the Ask setting for it has no place here.
const { defaultCwd, workspaceRoots } = bridgeSettings;
const settings = { defaultCwd, workspaceRoots };

/** The Codex app-server protocol v2: WebSocket `/` on the gateway (the Codex terminal UI refuses a URL with a path); `tau-gateway app-server`. */
export const codexDialect: DialectDescriptor<CodexSurface, typeof settings> = {
  registry: codexRegistry,
  createSurface: (context) =>
    new CodexSurface({
      core: context.core,
      defaultCwd: context.defaultCwd,
      workspaceRoots: context.workspaceRoots,
      serverVersion: context.serverVersion,
      // A Codex client's dynamic tools need a connection of their own, to the thread's host; a call
      // may wait for a person as long as an interaction does.
      toolConnection: context.toolConnection,
      log: context.log,
    }),
  gateway: (surface, { name, route }) => ({
    name,
    route,
    open: (connection) => (send, transport) => attachCodexJsonRpc(surface, send, { ...connection, transport }),
  }),
  command: {
    usage: USAGE,
    settings,
    relay: CODEX_RELAY,
    // A signal starts the stop: requests already received are still answered, new ones refused as
    // retryable, the turns still running are interrupted and the client hears each end
    // (turn/completed), then everything closes.
    serve: (surface, run) =>
      serveStdioEndpoint(run, "Codex", (gate) => (send, transport) => attachCodexJsonRpc(surface, send, { log: run.log, gate, transport }), {
        // A turn outlives its turn/start: the turns still running are ended (interrupted, each
        // reported with turn/completed) before the output closes, when a signal stopped the command.
        readsWhileDraining: true,
        interrupts: "on-signal",
        interrupt: (_endpoint, budgetMs) => run.core.endRunningTurns(budgetMs),
      }),
  },
};
