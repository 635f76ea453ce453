import type WebSocket from "ws";
import { cpuMs, cpuPerItemUs } from "./cpu.js";
import { now, quantile, round } from "./stats.js";

/** One measured turn: what its subscribers received, how fast, at what cost (Ask, Codex and ACP rows alike). */
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

/** One subscriber of a measured turn, whatever its dialect's client. */
export interface TurnSubscriber {
  readonly socket: WebSocket;
  /** Messages of the turn it received so far (events, notifications). */
  delivered(): number;
  resetDelivered(): void;
  /** Hands every message it receives to `listener`, with its arrival time. */
  onMessage(listener: (data: Buffer, at: number) => void): void;
}

export interface TimedTurn {
  dialect: NonNullable<TranslationResult["dialect"]>;
  subscribers: readonly TurnSubscriber[];
  /** In the message every subscriber gets when the turn has ended. */
  endMarker: Buffer;
  deltas: number;
  /** When a direct observer on the host received the turn's last delta (read once the turn ended). */
  lastDeltaAt(): number;
  /** Starts the turn; resolves when the dialect answers (it may answer when the turn ends). */
  start(): Promise<unknown>;
  /** Gateway processes whose CPU counts. */
  gatewayPids: readonly number[];
  timeoutMs: number;
}

/**
 * The measured part of every translation row: starts the turn, waits until each subscriber has
 * the turn's end (or was disconnected by the gateway as too slow: counted, not waited for), and
 * reports events/s, deltas/s, lag from the host's last delta to each subscriber's end and gateway
 * CPU (see translation.ts for what each means).
 */
export async function timeTurn(turn: TimedTurn): Promise<TranslationResult> {
  const { dialect, subscribers, endMarker, deltas, gatewayPids, timeoutMs } = turn;
  const count = subscribers.length;
  const completedAt: number[] = new Array(count).fill(Number.NaN);
  let remaining = count;
  let allDone!: () => void;
  const done = new Promise<void>((resolve) => (allDone = resolve));
  let disconnected = 0;
  subscribers.forEach((subscriber, i) => {
    subscriber.resetDelivered();
    let settled = false;
    const settle = () => {
      settled = true;
      if (--remaining === 0) allDone();
    };
    subscriber.onMessage((data, at) => {
      if (!settled && data.indexOf(endMarker) !== -1) {
        completedAt[i] = at;
        settle();
      }
    });
    // The gateway may drop a subscriber that reads too slowly (its slow-consumer limit): count it, do not wait for it.
    subscriber.socket.once("close", () => {
      if (settled) return;
      disconnected++;
      settle();
    });
  });

  const cpuBefore = gatewayPids.length > 0 ? cpuMs(gatewayPids) : Number.NaN;
  const sent = now();
  const started = turn.start();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all([done, started]),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${dialect} translation x${count}: ${remaining} subscribers without the turn's end after ${timeoutMs} ms`)), timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
  const completed = completedAt.filter((at) => !Number.isNaN(at));
  if (!completed.length) throw new Error(`${dialect} translation x${count}: every subscriber was disconnected before the turn's end`);
  const last = Math.max(...completed);
  const cpuAfter = gatewayPids.length > 0 ? cpuMs(gatewayPids) : Number.NaN;
  const events = subscribers.reduce((n, s) => n + s.delivered(), 0);
  const lastDeltaAt = turn.lastDeltaAt();
  const lags = completed.map((at) => at - lastDeltaAt);
  const ms = last - sent;
  return {
    dialect,
    subscribers: count,
    deltas,
    events,
    eventsPerSubscriber: round(events / count, 0),
    ms: round(ms, 1),
    eventsPerSecond: round(events / (ms / 1000), 0),
    deltasPerSecond: round((deltas * count) / (ms / 1000), 0),
    lagP50Ms: round(quantile(lags, 0.5), 1),
    lagMaxMs: round(Math.max(...lags), 1),
    gatewayCpuUsPerEvent: cpuPerItemUs(cpuBefore, cpuAfter, events),
    gatewayCpuUsPerDelta: cpuPerItemUs(cpuBefore, cpuAfter, deltas * count, 2),
    disconnected,
  };
}
