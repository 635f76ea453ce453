import type fc from "fast-check";
import { AskTestClient } from "../../support/ask-client.js";
import { openSession, runTurn } from "../../support/ask-events.js";
import { casePieces, type Piece } from "../generators/pieces.js";
import { clientMessages } from "../generators/registry-messages.js";
import { nextMessage } from "../infra/channel-wait.js";
import type { MessageChannel } from "../infra/message-channel.js";
import { ASK_MAX_BATCH, askResponse, checkAskMessage, expectAsk } from "../oracles/ask-oracle.js";
import type { FuzzSettings } from "../settings.js";
import type { StreamDialect } from "../stream-target.js";

/** Ask JSON-RPC, as a `/rpc` or `tau-gateway stdio` client sends it: requests, notifications, batches. */

/**
 * Turns are where the bridge does most (deltas → events, interactions): sends come up often;
 * closing the shared session rarely (the runner opens a new one when it is gone).
 */
export const ASK_METHOD_WEIGHTS: Record<string, number> = { "session/send": 8, "session/abort": 2, "session/subscribe": 2, "session/events": 2, "session/close": 0.3 };

export const askMessages = (settings: FuzzSettings): fc.Arbitrary<unknown> => clientMessages("ask", settings.sizes, { weights: ASK_METHOD_WEIGHTS });

export const askCases = (settings: FuzzSettings): fc.Arbitrary<Piece[]> => casePieces(askMessages(settings), settings.sizes, { batches: true, maxBatch: ASK_MAX_BATCH });

let runnerRequests = 0;

/** A request of the runner's own on a raw channel; resolves with its result. */
export async function askResult(channel: MessageChannel, method: string, params: unknown, timeoutMs?: number): Promise<any> {
  const id = `fuzz-runner-${++runnerRequests}`;
  const answer = nextMessage(channel, (m) => m?.id === id && !("method" in m), `the response to ${method}`, timeoutMs);
  channel.sendText(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
  const response = await answer;
  const problems = checkAskMessage(response, method);
  if (problems.length) throw new Error(`${method}: ${problems.join("; ")}`);
  if (response.error) throw new Error(`${method} failed: ${JSON.stringify(response.error)}`);
  return response.result;
}

/** initialize → session/create → session/subscribe → send → turn.completed, with every message checked. */
export async function askNormalSession(send: (line: string) => void, listen: (receive: (text: string) => void) => () => void, cwd: string): Promise<void> {
  const client = new AskTestClient(send);
  const problems: string[] = [];
  const stop = listen((text) => {
    try {
      client.receive(text);
    } catch (err) {
      problems.push(`unreadable message ${text.slice(0, 200)}: ${(err as Error).message}`);
    }
  });
  try {
    const sessionId = await openSession(client, { create: { workspace: { workspacePath: cwd } } });
    const { terminal } = await runTurn(client, sessionId, "hello after fuzzing");
    if (terminal.type !== "turn.completed") throw new Error(`the turn ended with ${JSON.stringify(terminal)}`);
    problems.push(...client.invalid);
    if (problems.length) throw new Error(`a normal session saw invalid messages:\n${problems.join("\n")}`);
  } finally {
    stop();
  }
}

export function askDialect(): StreamDialect {
  return {
    dialect: "ask",
    answers: { response: askResponse, check: checkAskMessage },
    expect: (unit, expectation) => expectAsk(unit, expectation),
    cases: askCases,
    sentinel: (n) => ({ id: `fuzz-sentinel-${n}`, text: JSON.stringify({ jsonrpc: "2.0", id: `fuzz-sentinel-${n}`, method: "ping" }) }),
    async handshake() {},
    async prepare(channel, cwd) {
      // The first answer also says the process is ready (a stdio command starts reading once its upstream is up).
      await askResult(channel, "initialize", { client: { name: "tau-gateway-fuzz", version: "1" } }, 60_000);
      const { session } = await askResult(channel, "session/create", { workspace: { workspacePath: cwd } });
      // Subscribed, the fuzzing connection also receives (and checks) every event its turns cause.
      await askResult(channel, "session/subscribe", { sessionId: session.sessionId });
      return { sessionId: session.sessionId as string, cwd };
    },
    async stillUsable(channel, live) {
      return askResult(channel, "session/events", { sessionId: live.sessionId, limit: 1 }).then(
        () => true,
        () => false,
      );
    },
    normalSession: (channel, cwd) =>
      askNormalSession(
        (line) => channel.sendText(line),
        (receive) => channel.onMessage(receive),
        cwd,
      ),
  };
}
