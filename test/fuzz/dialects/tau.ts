import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { clientMessages } from "../generators/registry-messages.js";
import { casePieces, type Piece } from "../generators/pieces.js";
import { nextMessage } from "../infra/channel-wait.js";
import type { MessageChannel } from "../infra/message-channel.js";
import { checkTauMessage, expectTau, tauResponse } from "../oracles/tau-oracle.js";
import type { FuzzSettings } from "../settings.js";
import type { StreamDialect } from "../stream-target.js";

/** Tau v18 envelopes, as a `/tau` client sends them. */

const FIXTURES = fileURLToPath(new URL("../../fixtures/seed-001/examples-v18.jsonl", import.meta.url));

/** The client messages of the recorded v18 examples, as templates besides the schema's. */
function recordedRequests(): Array<Record<string, unknown>> {
  return readFileSync(FIXTURES, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { direction: string; message: Record<string, unknown> })
    .filter((entry) => entry.direction === "client")
    .map((entry) => entry.message);
}

/** Turn requests come up more often: they drive the deltas, the busy rules and the long-open responses. */
const TAU_METHOD_WEIGHTS: Record<string, number> = { "session.submit": 4, "session.steer": 2, "session.queue": 2, "session.interrupt": 2, "session.snapshot": 2 };

export function tauCases(settings: FuzzSettings): fc.Arbitrary<Piece[]> {
  return casePieces(clientMessages("tau", settings.sizes, { examples: recordedRequests(), weights: TAU_METHOD_WEIGHTS }), settings.sizes, { batches: false });
}

let handshakes = 0;

async function request(channel: MessageChannel, method: string, params: unknown): Promise<any> {
  const id = `fuzz-runner-${++handshakes}`;
  const answer = nextMessage(channel, (m) => m?.type === "response" && m.id === id, `the response to ${method}`);
  channel.sendText(JSON.stringify({ version: 18, type: "request", id, method, params }));
  const response = await answer;
  const problems = checkTauMessage(response, method);
  if (problems.length) throw new Error(`${method}: ${problems.join("; ")}`);
  return response;
}

async function result(channel: MessageChannel, method: string, params: unknown): Promise<any> {
  const response = await request(channel, method, params);
  if (!response.ok) throw new Error(`${method} failed: ${JSON.stringify(response.error)}`);
  return response.result;
}

export function tauDialect(): StreamDialect {
  return {
    dialect: "tau",
    answers: { response: tauResponse, check: checkTauMessage },
    expect: expectTau,
    cases: tauCases,
    async handshake(channel) {
      // The gateway's first message is the host's ready, relayed.
      const ready = await nextMessage(channel, () => true, "ready");
      const problems = checkTauMessage(ready, undefined);
      if (ready?.type !== "ready" || problems.length) throw new Error(`the first message was not a valid ready: ${JSON.stringify(ready)} ${problems.join("; ")}`);
      await result(channel, "initialize", { client: { name: "tau-gateway-fuzz", version: "1" } });
    },
    async prepare(channel, cwd) {
      const { sessionId } = await result(channel, "session.create", { executionEnvironment: { kind: "local", cwd }, attributes: {} });
      return { sessionId, cwd };
    },
    async normalSession(channel, cwd) {
      const { sessionId } = await result(channel, "session.create", { executionEnvironment: { kind: "local", cwd }, attributes: {} });
      // The response to a submit comes when the turn has settled.
      const turn = await result(channel, "session.submit", { sessionId, text: "hello after fuzzing" });
      if (turn.turn?.status !== "completed") throw new Error(`the turn did not complete: ${JSON.stringify(turn)}`);
    },
  };
}
