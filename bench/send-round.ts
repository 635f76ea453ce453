import { BenchAskClient } from "./ask-client.js";
import { cpuMs, cpuPerItemUs } from "./cpu.js";
import type { GatewayAccess } from "./stack.js";
import { newObservedSession } from "./streaming.js";
import { BenchTauClient } from "./tau-client.js";
import { now, quantile, round, sleep } from "./stats.js";

/**
 * What the gateway adds to one conversational round: a one-line message whose reply is one line
 * ("You said: hello", two streamed chunks), one after another on one session, a fixed number of
 * rounds after a few warm-up rounds (so both paths end with a session of the same length: a
 * delta's cost grows a little with the session).
 *
 * - direct: `session.submit` to the host, on a connection that observes the session (as a client
 *   showing the turn would), until its response, which Tau sends when the turn settles;
 * - gateway: `session/send` on Ask `/rpc`, on a connection subscribed (live) to the session, until
 *   that connection receives the turn's `turn.completed` (the send itself is answered at the start).
 */

export const ROUND_TEXT = "hello";

const TURN_COMPLETED = Buffer.from('"type":"turn.completed"');
const ROUND_TIMEOUT_MS = 30_000;

export interface SendRoundResult {
  target: "direct" | "gateway";
  rounds: number;
  roundsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Gateway CPU per round, µs (null for direct or without /proc). */
  gatewayCpuUsPerRound: number | null;
  /** Host CPU per round, µs (null without /proc). */
  hostCpuUsPerRound: number | null;
}

export interface SendRoundOptions {
  warmupRounds: number;
  rounds: number;
  hostPid?: number;
  gatewayPid?: number;
}

/** Runs `oneRound` one after another; latencies and CPU of the rounds after the warm-up. */
async function measureRounds(target: SendRoundResult["target"], oneRound: () => Promise<void>, options: SendRoundOptions): Promise<SendRoundResult> {
  const pids = { gateway: target === "gateway" ? options.gatewayPid : undefined, host: options.hostPid };
  const readCpu = () => ({ gateway: pids.gateway ? cpuMs([pids.gateway]) : Number.NaN, host: pids.host ? cpuMs([pids.host]) : Number.NaN });
  for (let i = 0; i < options.warmupRounds; i++) await oneRound();
  const latencies: number[] = [];
  const before = readCpu();
  const began = now();
  for (let i = 0; i < options.rounds; i++) {
    const sent = now();
    await oneRound();
    latencies.push(now() - sent);
  }
  const seconds = (now() - began) / 1000;
  const after = readCpu();
  return {
    target,
    rounds: latencies.length,
    roundsPerSecond: round(latencies.length / seconds, 0),
    p50Ms: round(quantile(latencies, 0.5), 3),
    p99Ms: round(quantile(latencies, 0.99), 3),
    gatewayCpuUsPerRound: cpuPerItemUs(before.gateway, after.gateway, latencies.length),
    hostCpuUsPerRound: cpuPerItemUs(before.host, after.host, latencies.length),
  };
}

/** The round sent straight to the host. */
export async function measureDirectRound(hostUrl: string, options: SendRoundOptions): Promise<SendRoundResult> {
  const client = await BenchTauClient.connect(hostUrl);
  try {
    const sessionId = await newObservedSession(client);
    return await measureRounds(
      "direct",
      async () => {
        const response = await client.request("session.submit", { sessionId, text: ROUND_TEXT });
        if (!response.ok) throw new Error(`direct round: session.submit failed: ${response.error?.code} ${response.error?.message}`);
      },
      options,
    );
  } finally {
    await client.close();
    await sleep(50);
  }
}

/** The round through the gateway's Ask surface. */
export async function measureGatewayRound(access: GatewayAccess, options: SendRoundOptions): Promise<SendRoundResult> {
  const client = await BenchAskClient.connect(access.rpc, access.headers);
  try {
    const { session } = await client.call<{ session: { sessionId: string } }>("session/create", {});
    const sessionId = session.sessionId;
    await client.call("session/subscribe", { sessionId, deliveryKind: "live" });
    let completed: (() => void) | undefined;
    client.onEvent = (data) => {
      if (completed && data.indexOf(TURN_COMPLETED) !== -1) completed();
    };
    return await measureRounds(
      "gateway",
      async () => {
        // One turn at a time on the session, so the next turn.completed is this round's.
        let timer: NodeJS.Timeout | undefined;
        const done = new Promise<void>((resolve, reject) => {
          completed = resolve;
          timer = setTimeout(() => reject(new Error(`gateway round: no turn.completed within ${ROUND_TIMEOUT_MS} ms`)), ROUND_TIMEOUT_MS);
        });
        try {
          await client.call("session/send", { sessionId, content: ROUND_TEXT });
          await done;
        } finally {
          clearTimeout(timer);
          completed = undefined;
        }
      },
      options,
    );
  } finally {
    await client.close();
    await sleep(50);
  }
}
