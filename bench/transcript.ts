import { createWriteStream } from "node:fs";
import { once } from "node:events";
import type { Event, SessionEventParams, SessionSendParams, SessionSendResult } from "../generated/ask-v1.0.js";
import type { SessionDeltaMessage, SessionListResult, SessionSubmitParams, UserTurnResult } from "../generated/tau-v18.js";

/**
 * A valid mixed transcript for `tau-gateway validate`: repeating blocks of ten lines, six Tau
 * (session.list and session.submit with their responses, two streaming deltas; wrapped with their
 * direction, as a recording proxy writes them) and four Ask (a session/send request and response
 * and two session/event notifications; bare, as an NDJSON capture has them, so their direction is
 * inferred). Ids are unique per block, so every response correlates with its request.
 */

export const BLOCK_LINES = 10;

export function transcriptBlock(k: number): string[] {
  const sessionId = "0195d6e4-4cf9-7f44-a2d8-f8f7f49ee9d3";
  const ts = 1767225600000 + k;
  const tau = (direction: "client" | "server", message: object) => JSON.stringify({ direction, message });
  const listResult: SessionListResult = { sessions: [{ sessionId, lifecycle: "running" }] };
  const submit: SessionSubmitParams = { sessionId, text: `question number ${k}` };
  const delta = (n: number): SessionDeltaMessage => ({
    version: 18,
    type: "session.delta",
    sessionId,
    fromRevision: 10 + 2 * k + n,
    toRevision: 11 + 2 * k + n,
    cause: { type: "assistant-stream" },
    delta: { type: "snapshot.patch", changes: [{ type: "message.content.append", messageId: `msg-${k}`, text: "You said", timestamp: ts }] },
  });
  const turn: UserTurnResult = { userHistoryEntryId: `turn-${k}`, turn: { status: "completed", stopReason: "stop" } };
  const send: SessionSendParams = { sessionId, content: `hello ${k}` };
  const sent: SessionSendResult = { accepted: true, status: "steered", turnId: `turn-${k}` };
  const event = (e: Event): SessionEventParams => ({ event: e, sessionId });
  return [
    tau("client", { version: 18, type: "request", id: `list-${k}`, method: "session.list", params: {} }),
    tau("server", { version: 18, type: "response", id: `list-${k}`, ok: true, result: listResult }),
    tau("client", { version: 18, type: "request", id: `submit-${k}`, method: "session.submit", params: submit }),
    tau("server", delta(0)),
    tau("server", delta(1)),
    tau("server", { version: 18, type: "response", id: `submit-${k}`, ok: true, result: turn }),
    JSON.stringify({ jsonrpc: "2.0", id: k + 1, method: "session/send", params: send }),
    JSON.stringify({ jsonrpc: "2.0", id: k + 1, result: sent }),
    JSON.stringify({ jsonrpc: "2.0", method: "session/event", params: event({ type: "model.streaming", seq: 3 * k + 1, payload: { delta: "You said" } }) }),
    JSON.stringify({
      jsonrpc: "2.0",
      method: "session/event",
      params: event({ type: "turn.completed", seq: 3 * k + 2, payload: { turnId: `turn-${k}`, response: `You said: hello ${k}`, inputTokens: 2, outputTokens: 4, cost: 0.000006 } }),
    }),
  ];
}

/** Writes `lines` lines (whole blocks, the last one cut) to `path`; resolves with the byte count. */
export async function writeTranscript(path: string, lines: number): Promise<number> {
  const out = createWriteStream(path);
  let bytes = 0;
  for (let k = 0, written = 0; written < lines; k++) {
    const block = transcriptBlock(k).slice(0, lines - written);
    const text = `${block.join("\n")}\n`;
    written += block.length;
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
  return bytes;
}
