import type { Readable, Writable } from "node:stream";
import { createJSONRPCErrorResponse } from "json-rpc-2.0";
import type { AskBridge } from "../bridge/ask-bridge.js";
import { ASK_ERROR_CODES } from "../registry/ask/index.js";
import { attachAskJsonRpc, type AskJsonRpcOptions } from "./ask-jsonrpc.js";
import { NdjsonStream, type NdjsonStreamOptions } from "./ndjson-stream.js";
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
      const connection = attachAskJsonRpc(bridge, (message) => send(textOf(message)), options);
      return {
        receive: (line) => connection.receive(line),
        // The line was never parsed, so its id is unknown: answered like unparsable JSON, with id null.
        oversized: (maxLineBytes) => send(oversizedAnswer(maxLineBytes, options.jsonrpcMember)),
        close: () => connection.close(),
      };
    },
    options,
  );
}

function oversizedAnswer(maxLineBytes: number, jsonrpcMember: AskJsonRpcOptions["jsonrpcMember"]): string {
  const { jsonrpc, ...response } = createJSONRPCErrorResponse(
    null,
    ASK_ERROR_CODES.invalid_request,
    `Invalid Request: a message of more than ${maxLineBytes} bytes was skipped (the gateway's limit)`,
    { limit: maxLineBytes },
  );
  return JSON.stringify(jsonrpcMember === "include" ? { jsonrpc, ...response } : response);
}
