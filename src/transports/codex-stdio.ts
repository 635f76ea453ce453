import type { Readable, Writable } from "node:stream";
import type { CodexBridge } from "../codex/codex-bridge.js";
import { attachCodexJsonRpc, type CodexJsonRpcOptions } from "./codex-jsonrpc.js";
import { serveNdjsonLines } from "./ndjson-stdio.js";

/**
 * How long a turn's first notifications wait after the turn/start response on a pipe. The AI SDK
 * provider subscribes to a turn once it has read the response, and a pipe hands a slow reader
 * whatever was written meanwhile in the same read: one event-loop turn was too little with a busy
 * reader, a few milliseconds per turn cost nothing.
 */
export const STDIO_RELEASE_DELAY_MS = 25;

/**
 * The Codex app-server surface as NDJSON on a pair of streams (`tau-gateway app-server`, which
 * clients spawn as `<codexPath> app-server`): one JSON message per line each way; resolves when
 * input ends (or `stop` aborts) and every request received has been answered.
 */
export function serveCodexStdio(bridge: CodexBridge, input: Readable, output: Writable, options: CodexJsonRpcOptions & { stop?: AbortSignal } = {}): Promise<void> {
  const connection = attachCodexJsonRpc(bridge, (text) => void output.write(`${text}\n`), { releaseDelayMs: STDIO_RELEASE_DELAY_MS, ...options });
  return serveNdjsonLines(connection, input, options.stop);
}
