import { jsonRpcFrames } from "../jsonrpc.js";
import type { MessageFrames } from "../model.js";
import { int, literal, obj } from "../schema.js";

export { jsonRpcDefinitions } from "../jsonrpc.js";

/** Ask's messages are JSON-RPC 2.0 (see ../jsonrpc.ts, null params meaning none); its events travel as `{type, seq, payload}` inside `session/event`. */
export const askFrames: MessageFrames = {
  ...jsonRpcFrames({ nullParams: true }),
  event: (entry, payload) => obj({ type: literal(entry.name), seq: int({ min: 1 }), payload }),
};
