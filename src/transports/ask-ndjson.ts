import type { Readable, Writable } from "node:stream";
import type { AskBridge } from "../ask/ask-bridge.js";
import { attachAskJsonRpc, type AskJsonRpcOptions } from "./ask-jsonrpc.js";
import { NdjsonStream, type NdjsonStreamOptions } from "./ndjson-stream.js";
import { PIPE_TRANSPORT } from "./outbound-policy.js";
import { textOf } from "./shared-text.js";

/**
 * The Ask surface as NDJSON on a pair of streams: stdin/stdout for clients that spawn an
 * app-server executable, or one client of the Unix socket. Each peer is its own Ask connection
 * (its own subscriptions and cursors), on the bridge every other surface shares. The in-flight
 * limit and the drain are the connection's gate (`options.gate`), as on WebSocket `/rpc`.
 */
export type AskNdjsonOptions = AskJsonRpcOptions & NdjsonStreamOptions;

export function serveAskNdjson(bridge: AskBridge, input: Readable, output: Writable, options: AskNdjsonOptions): NdjsonStream {
  return new NdjsonStream(
    input,
    output,
    (send) => {
      const connection = attachAskJsonRpc(bridge, (message) => send(textOf(message)), { transport: PIPE_TRANSPORT, ...options });
      return {
        receive: (line) => connection.receive(line),
        oversized: (maxLineBytes) => connection.skipOversized(maxLineBytes),
        close: () => connection.close(),
      };
    },
    options,
  );
}
