import type { SseFrame } from "../../support/sse-client.js";
import type { SseCase } from "../generators/sse-requests.js";
import type { DialectAnswers } from "./answer-ledger.js";

/**
 * `GET /rpc/events`: 400 for a missing session or a cursor that is not a seq, 404 for a session
 * that does not exist, otherwise 200 and a replay of exactly the events after the cursor
 * (`Last-Event-ID` wins over `afterSeq`), each frame a valid `session/event` whose id is its seq.
 */

export function expectedAnswer(c: SseCase): { status: 200; after: number } | { status: 400 | 404 } {
  const sessionId = c.session;
  if (sessionId === undefined || sessionId === "") return { status: 400 };
  // Node reads header values without the optional whitespace around them.
  const header = c.lastEventId?.replace(/^[ \t]+|[ \t]+$/g, "");
  const text = header ?? c.afterSeq;
  let after = 0;
  if (text !== undefined && text !== "") {
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) return { status: 400 };
    after = Number(text);
  }
  if (sessionId === "live") return { status: 200, after };
  if (!/\S/.test(sessionId)) return { status: 400 };
  return { status: 404 };
}

const ERROR_CODES_OF_STATUS: Record<number, number[]> = { 400: [-32602, -32600], 404: [-32004] };

/** A refused stream: a JSON-RPC error object whose code matches the status. */
export function checkRefusal(status: number, body: string, answers: DialectAnswers): string[] {
  let parsed: any;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [`HTTP ${status} with a body that is not JSON: ${body.slice(0, 200)}`];
  }
  const problems = answers.check({ jsonrpc: "2.0", id: null, ...parsed }, undefined);
  if (!ERROR_CODES_OF_STATUS[status]?.includes(parsed?.error?.code)) problems.push(`HTTP ${status} with error ${JSON.stringify(parsed?.error)}`);
  return problems;
}

/** The frames of one stream: each a valid session/event of `sessionId` whose id is its seq. */
export function checkEventFrames(frames: readonly SseFrame[], sessionId: string, answers: DialectAnswers): string[] {
  const problems: string[] = [];
  for (const frame of frames) {
    if (frame.event !== "session/event") {
      problems.push(`a frame that is not a session/event: ${JSON.stringify(frame).slice(0, 300)}`);
      continue;
    }
    let data: any;
    try {
      data = JSON.parse(frame.data ?? "");
    } catch {
      problems.push(`a frame whose data is not JSON: ${JSON.stringify(frame).slice(0, 300)}`);
      continue;
    }
    problems.push(...answers.check({ jsonrpc: "2.0", method: "session/event", params: data }, undefined));
    if (data?.sessionId !== sessionId) problems.push(`an event of another session: ${frame.data?.slice(0, 200)}`);
    if (frame.id !== String(data?.event?.seq)) problems.push(`frame id ${frame.id} is not its event's seq ${data?.event?.seq}`);
  }
  return problems;
}

/** The seqs a client must end up with: everything after the cursor, once each, in order. */
export const replayAfter = (after: number, newestSeq: number): number[] => Array.from({ length: Math.max(0, newestSeq - after) }, (_, i) => after + 1 + i);
