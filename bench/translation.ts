import { BenchAskClient } from "./ask-client.js";
import type { GatewayAccess } from "./stack.js";
import { turnText } from "./streaming.js";
import { BenchTauClient } from "./tau-client.js";
import { inBatches, sleep } from "./stats.js";
import { timeTurn, type TranslationResult } from "./timed-turn.js";

export type { TranslationResult };

/**
 * Translation: the streaming turn through the Ask surface. N connections subscribe (live) to one
 * session on `/rpc`; the first sends the text. Every subscriber receives the session's events
 * (`model.streaming` with the text of the Tau deltas — one event per delta, or fewer when the
 * gateway merges the chunks of deltas it reads together — then `turn.completed`). A Tau
 * connection straight to the host observes the same session and stamps the host's last delta; all
 * stamps come from one clock.
 *
 * - events/s: events delivered to all subscribers together, from `session/send` to the last
 *   subscriber's `turn.completed`;
 * - deltas/s: the same window, counting the Tau deltas whose text reached each subscriber
 *   (deltas × subscribers): the same work whether or not chunks were merged, so builds compare;
 * - lag: from the direct observer receiving the host's last delta to each subscriber receiving
 *   `turn.completed` (p50 and max over subscribers).
 */

const TURN_COMPLETED = Buffer.from('"type":"turn.completed"');

export async function measureTranslation(
  access: GatewayAccess,
  hostUrl: string,
  subscribers: number,
  deltas: number,
  gatewayPid?: number,
  timeoutMs = 120_000,
): Promise<TranslationResult> {
  return measureFanOut([access], hostUrl, subscribers, deltas, gatewayPid === undefined ? [] : [gatewayPid], timeoutMs);
}

/**
 * The same turn with the subscribers spread over several gateways (replicas sharing a store):
 * subscriber i connects to `accesses[i % n]`, the first one (on the first gateway) creates the
 * session and sends; the CPU is the sum over `gatewayPids`.
 */
export async function measureFanOut(
  accesses: readonly GatewayAccess[],
  hostUrl: string,
  subscribers: number,
  deltas: number,
  gatewayPids: readonly number[] = [],
  timeoutMs = 120_000,
): Promise<TranslationResult> {
  const clients = await inBatches(subscribers, 16, (i) => {
    const access = accesses[i % accesses.length]!;
    return BenchAskClient.connect(access.rpc, access.headers);
  });
  const observer = await BenchTauClient.connect(hostUrl);
  try {
    const sender = clients[0]!;
    const { session } = await sender.call<{ session: { sessionId: string } }>("session/create", {});
    const sessionId = session.sessionId;
    await Promise.all(clients.map((c) => c.call("session/subscribe", { sessionId, deliveryKind: "live" })));

    await observer.call("session.observe", { sessionId });
    let lastDeltaAt = Number.NaN;
    observer.onStream = (message, at) => {
      if (message.type === "session.delta") lastDeltaAt = at;
    };

    return await timeTurn({
      dialect: "ask",
      subscribers: clients.map((client) => ({
        socket: client.socket,
        delivered: () => client.events,
        resetDelivered: () => void (client.events = 0),
        onMessage: (listener) => void (client.onEvent = listener),
      })),
      endMarker: TURN_COMPLETED,
      deltas,
      lastDeltaAt: () => lastDeltaAt,
      start: () => sender.call("session/send", { sessionId, content: turnText(deltas) }),
      gatewayPids,
      timeoutMs,
    });
  } finally {
    await Promise.all([...clients.map((c) => c.close()), observer.close()]);
    await sleep(100);
  }
}

