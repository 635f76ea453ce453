import type fc from "fast-check";
import { AskTestClient } from "../../support/ask-client.js";
import { openSession, runTurn } from "../../support/ask-events.js";
import { ASK_FRAMING } from "../oracles/json-rpc-oracle.js";
import type { FuzzSettings } from "../settings.js";
import type { StreamDialect } from "../stream-target.js";
import { jsonRpcDialect, jsonRpcMessages, jsonRpcResult } from "./json-rpc.js";

/** Ask JSON-RPC, as a `/rpc` or `tau-gateway stdio` client sends it: requests, notifications, batches. */

/**
 * Turns are where the bridge does most (deltas → events, interactions): sends come up often;
 * closing the shared session rarely (the runner opens a new one when it is gone).
 */
const ASK_METHOD_WEIGHTS: Record<string, number> = { "session/send": 8, "session/abort": 2, "session/subscribe": 2, "session/events": 2, "session/close": 0.3 };

export const askMessages = (settings: FuzzSettings): fc.Arbitrary<unknown> => jsonRpcMessages({ dialect: "ask", weights: ASK_METHOD_WEIGHTS }, settings);

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
  return jsonRpcDialect({
    dialect: "ask",
    framing: ASK_FRAMING,
    weights: ASK_METHOD_WEIGHTS,
    sentinel: { method: "ping" },
    async prepare(channel, cwd) {
      // The first answer also says the process is ready (a stdio command starts reading once its upstream is up).
      await jsonRpcResult("ask", channel, "initialize", { client: { name: "tau-gateway-fuzz", version: "1" } }, 60_000);
      const { session } = await jsonRpcResult("ask", channel, "session/create", { workspace: { workspacePath: cwd } });
      // Subscribed, the fuzzing connection also receives (and checks) every event its turns cause.
      await jsonRpcResult("ask", channel, "session/subscribe", { sessionId: session.sessionId });
      return { sessionId: session.sessionId as string, cwd };
    },
    stillUsable: (channel, live) =>
      jsonRpcResult("ask", channel, "session/events", { sessionId: live.sessionId, limit: 1 }).then(
        () => true,
        () => false,
      ),
    normalSession: (channel, cwd) =>
      askNormalSession(
        (line) => channel.sendText(line),
        (receive) => channel.onMessage(receive),
        cwd,
      ),
  });
}
