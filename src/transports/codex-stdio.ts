import type { Readable, Writable } from "node:stream";
import type { CodexBridge } from "../codex/codex-bridge.js";
import { attachCodexJsonRpc, type CodexJsonRpcOptions } from "./codex-jsonrpc.js";
import { serveNdjsonLines } from "./ndjson-stdio.js";

/**
 * The Codex app-server surface as NDJSON on a pair of streams (`tau-gateway app-server`, which
 * clients spawn as `<codexPath> app-server`): one JSON message per line each way; resolves when
 * input ends (or `stop` aborts) and every request received has been answered.
 */
export function serveCodexStdio(bridge: CodexBridge, input: Readable, output: Writable, options: CodexJsonRpcOptions & { stop?: AbortSignal } = {}): Promise<void> {
  const connection = attachCodexJsonRpc(bridge, (text) => void output.write(`${text}\n`), options);
  return serveNdjsonLines(connection, input, options.stop);
}
