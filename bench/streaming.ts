import { tmpdir } from "node:os";
import { cpuMs, cpuPerItemUs } from "./cpu.js";
import { BenchTauClient } from "./tau-client.js";
import { now, round, sleep } from "./stats.js";
import type { Target } from "./round-trip.js";

/**
 * Streaming relay: one turn whose reply streams `deltas` small deltas (the scripted agent answers
 * "You said: T" in 8-character `message.content.append` pieces, so T is sized to make exactly that
 * many), watched by the client that submitted it, directly on the host or through a relay.
 * Messages per second = stream messages received between sending `session.submit` and its
 * response (which Tau sends when the turn settles), divided by that time.
 */

export const CHUNK_CHARS = 8;
const REPLY_PREFIX = "You said: ";

/** A one-line user text whose scripted reply streams exactly `deltas` chunks. */
export function turnText(deltas: number): string {
  const length = deltas * CHUNK_CHARS - REPLY_PREFIX.length;
  const words = "stream relay benchmark text ";
  let text = words.repeat(Math.ceil(length / words.length) + 1).slice(0, length);
  // No trailing blank: the agent trims blank lines only, but keep the text tidy and exact.
  if (text.endsWith(" ")) text = `${text.slice(0, -1)}x`;
  return text;
}

export interface StreamingResult {
  target: string;
  deltas: number;
  /** `message.content.append` changes seen (the workload: should equal `deltas`). */
  appends: number;
  messages: number;
  ms: number;
  messagesPerSecond: number;
}

export interface StreamingSummary extends StreamingResult {
  /** Messages per second of each measured run; the reported one is their median. */
  runs: number[];
  /** CPU per relayed message over all measured runs, µs (null for direct). */
  relayCpuUsPerMessage: number | null;
  hostCpuUsPerMessage: number | null;
}

export async function newObservedSession(client: BenchTauClient): Promise<string> {
  const { sessionId } = await client.call<{ sessionId: string }>("session.create", {
    executionEnvironment: { kind: "local", cwd: tmpdir() },
    attributes: { source: "bench" },
  });
  await client.call("session.observe", { sessionId });
  return sessionId;
}

/** One measured turn on a fresh session over a fresh connection. */
export async function streamTurn(target: Target, deltas: number): Promise<StreamingResult> {
  const client = await BenchTauClient.connect(target.url, target.headers);
  try {
    const sessionId = await newObservedSession(client);
    let messages = 0;
    let appends = 0;
    client.onStream = (message) => {
      messages++;
      const changes = message.type === "session.delta" && message.delta.type === "snapshot.patch" ? message.delta.changes : [];
      for (const change of changes) if (change.type === "message.content.append") appends++;
    };
    const sent = now();
    const response = await client.request("session.submit", { sessionId, text: turnText(deltas) });
    const ms = now() - sent;
    if (!response.ok) throw new Error(`${target.name}: session.submit failed: ${response.error?.code} ${response.error?.message}`);
    return { target: target.name, deltas, appends, messages, ms: round(ms, 1), messagesPerSecond: round(messages / (ms / 1000), 0) };
  } finally {
    await client.close();
    await sleep(50);
  }
}

/** A short warm-up turn, then `runs` measured turns; the median run by messages per second is reported. */
export async function measureStreaming(target: Target, deltas: number, runs: number): Promise<StreamingSummary> {
  await streamTurn(target, Math.min(1000, deltas));
  const results: StreamingResult[] = [];
  const relayBefore = target.relayPids?.length ? cpuMs(target.relayPids) : Number.NaN;
  const hostBefore = target.hostPid ? cpuMs([target.hostPid]) : Number.NaN;
  for (let i = 0; i < runs; i++) results.push(await streamTurn(target, deltas));
  const relayAfter = target.relayPids?.length ? cpuMs(target.relayPids) : Number.NaN;
  const hostAfter = target.hostPid ? cpuMs([target.hostPid]) : Number.NaN;
  const messages = results.reduce((n, r) => n + r.messages, 0);
  const sorted = [...results].sort((a, b) => a.messagesPerSecond - b.messagesPerSecond);
  const middle = sorted[Math.floor((sorted.length - 1) / 2)]!;
  return {
    ...middle,
    runs: results.map((r) => r.messagesPerSecond),
    // Includes session set-up and the connections' handshakes: a few requests next to 10,000+ messages a run.
    relayCpuUsPerMessage: cpuPerItemUs(relayBefore, relayAfter, messages),
    hostCpuUsPerMessage: cpuPerItemUs(hostBefore, hostAfter, messages),
  };
}
