import { BenchAskClient } from "./ask-client.js";
import { cpuMs, cpuPerItemUs } from "./cpu.js";
import type { GatewayAccess } from "./stack.js";
import { turnText } from "./streaming.js";
import { BenchTauClient } from "./tau-client.js";
import { inBatches, now, quantile, round, sleep } from "./stats.js";

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

export interface TranslationResult {
  /** The client dialect (dialect-translation.ts for Codex and ACP); absent in results written before it was recorded: Ask. */
  dialect?: "ask" | "codex" | "acp";
  subscribers: number;
  deltas: number;
  events: number;
  eventsPerSubscriber: number;
  ms: number;
  eventsPerSecond: number;
  lagP50Ms: number;
  lagMaxMs: number;
  /** Tau deltas whose text reached all subscribers together, per second (deltas × subscribers ÷ time). */
  deltasPerSecond: number;
  /** Gateway CPU per delivered event, µs (null without /proc). */
  gatewayCpuUsPerEvent: number | null;
  /** Gateway CPU per delta delivered to one subscriber, µs (null without /proc). */
  gatewayCpuUsPerDelta: number | null;
  /** Subscribers the gateway disconnected before their turn.completed (too slow for its limits). */
  disconnected: number;
}

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

    const completedAt: number[] = new Array(subscribers).fill(Number.NaN);
    let remaining = subscribers;
    let allDone!: () => void;
    const done = new Promise<void>((resolve) => (allDone = resolve));
    let disconnected = 0;
    clients.forEach((client, i) => {
      client.events = 0;
      let settled = false;
      const settle = () => {
        settled = true;
        if (--remaining === 0) allDone();
      };
      client.onEvent = (data, at) => {
        if (!settled && data.indexOf(TURN_COMPLETED) !== -1) {
          completedAt[i] = at;
          settle();
        }
      };
      // The gateway may drop a subscriber that reads too slowly (its slow-consumer limit): count it, do not wait for it.
      client.socket.once("close", () => {
        if (settled) return;
        disconnected++;
        settle();
      });
    });

    const cpuBefore = gatewayPids.length > 0 ? cpuMs(gatewayPids) : Number.NaN;
    const sent = now();
    await sender.call("session/send", { sessionId, content: turnText(deltas) });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      done,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`translation x${subscribers}: ${remaining} subscribers without turn.completed after ${timeoutMs} ms`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
    const completed = completedAt.filter((at) => !Number.isNaN(at));
    if (!completed.length) throw new Error(`translation x${subscribers}: every subscriber was disconnected before turn.completed`);
    const last = Math.max(...completed);
    const cpuAfter = gatewayPids.length > 0 ? cpuMs(gatewayPids) : Number.NaN;
    const events = clients.reduce((n, c) => n + c.events, 0);
    const lags = completed.map((at) => at - lastDeltaAt);
    const ms = last - sent;
    return {
      dialect: "ask",
      subscribers,
      deltas,
      events,
      eventsPerSubscriber: round(events / subscribers, 0),
      ms: round(ms, 1),
      eventsPerSecond: round(events / (ms / 1000), 0),
      deltasPerSecond: round((deltas * subscribers) / (ms / 1000), 0),
      lagP50Ms: round(quantile(lags, 0.5), 1),
      lagMaxMs: round(Math.max(...lags), 1),
      gatewayCpuUsPerEvent: cpuPerItemUs(cpuBefore, cpuAfter, events),
      gatewayCpuUsPerDelta: cpuPerItemUs(cpuBefore, cpuAfter, deltas * subscribers, 2),
      disconnected,
    };
  } finally {
    await Promise.all([...clients.map((c) => c.close()), observer.close()]);
    await sleep(100);
  }
}

