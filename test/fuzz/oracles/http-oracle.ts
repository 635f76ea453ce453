import { MAX_MESSAGE_BYTES } from "../settings.js";
import { AnswerLedger, type DialectAnswers } from "./answer-ledger.js";
import { Expectation } from "./expectation.js";
import { ASK_FRAMING, expectJsonRpc } from "./json-rpc-oracle.js";
import { JsonBoundsScan, topLevelId } from "../../../src/shared/json-bounds.js";

/**
 * What `POST /rpc` must answer a body: 413 over the size limit, 415 for anything but JSON (both
 * with a JSON-RPC error object, null id), otherwise 200 with exactly the responses owed — one
 * object or a batch array — or 204 when nothing is owed.
 */

export interface HttpAnswer {
  status: number;
  contentType: string | null;
  text: string;
}

export interface HttpVerdict {
  problems: string[];
  /** Messages (and batch elements) the body held. */
  sent: number;
  /** The responses checked, when the body was read as JSON-RPC. */
  ledger?: AnswerLedger;
}

const lenientUtf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** `json`: the body is declared JSON in UTF-8 (the only kind the gateway reads). */
export function checkHttpAnswer(body: Buffer, json: boolean, answer: HttpAnswer, answers: DialectAnswers): HttpVerdict {
  const { status, text } = answer;
  if (body.length > MAX_MESSAGE_BYTES) return { sent: 1, problems: status === 413 ? refusalBody(text, answers) : [`a body of ${body.length} bytes: HTTP ${status}, expected 413`] };
  if (!json) {
    const problems = status === 415 ? [] : [`HTTP ${status} for a body that is not declared JSON in UTF-8, expected 415`];
    return { sent: 1, problems: [...problems, ...refusalBody(text, answers)] };
  }
  const expectation = new Expectation();
  // Invalid UTF-8 is read as U+FFFD, as Fastify decodes a body.
  if (!expectRefusedWhileRead(body, expectation)) expectJsonRpc(lenientUtf8.decode(body), expectation, { ...ASK_FRAMING, blankIsParseError: true });
  const owesSomething = expectation.nullsAtLeast > 0 || [...expectation.owed.values()].some((o) => o.min > 0);
  const mayOweSomething = expectation.nullsAtMost > 0 || expectation.owed.size > 0;
  const problems: string[] = [];
  const verdict = { sent: expectation.sent, problems };
  if (status === 204) {
    if (owesSomething) problems.push("HTTP 204 where responses were owed");
    if (text !== "") problems.push(`HTTP 204 with a body: ${text.slice(0, 200)}`);
    return verdict;
  }
  if (status !== 200) return { ...verdict, problems: [`HTTP ${status} for a JSON body (expected 200 or 204): ${text.slice(0, 300)}`] };
  if (!mayOweSomething) problems.push(`HTTP 200 where nothing was owed (expected 204): ${text.slice(0, 300)}`);
  if (!answer.contentType?.startsWith("application/json")) problems.push(`HTTP 200 with Content-Type ${answer.contentType}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ...verdict, problems: [...problems, `HTTP 200 with a body that is not JSON: ${text.slice(0, 300)}`] };
  }
  const ledger = new AnswerLedger(expectation, answers);
  for (const m of Array.isArray(parsed) ? parsed : [parsed]) ledger.receive(m);
  problems.push(...ledger.verdict());
  return { ...verdict, ledger };
}

/**
 * A body past the shape bounds is refused as it is read, at the byte that passes them
 * (json-body-reader.ts): one Invalid Request error, with the top-level id read up to that byte.
 */
function expectRefusedWhileRead(body: Buffer, expectation: Expectation): boolean {
  const scan = new JsonBoundsScan();
  if (!scan.feed(body.toString("latin1"))) return false;
  expectation.sent++;
  const id = topLevelId(lenientUtf8.decode(body.subarray(0, scan.refusedAt + 1)));
  if (id !== undefined) expectation.owe(id, undefined);
  else expectation.oweNull(true);
  return true;
}

/** A refusal's body: one JSON-RPC error object with a null id. */
function refusalBody(text: string, answers: DialectAnswers): string[] {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const problems = answers.check(body, undefined);
    if (body.id !== null || typeof (body.error as { code?: unknown })?.code !== "number") problems.push(`a refusal's body should be a JSON-RPC error with a null id: ${text.slice(0, 300)}`);
    return problems;
  } catch {
    return [`a refusal's body is not JSON: ${text.slice(0, 300)}`];
  }
}
