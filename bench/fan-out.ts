import { cpuMs, cpuPerItemUs } from "./cpu.js";
import { startNodeRelay } from "./node-relay.js";
import { serveHasFlag, startGateway, type GatewayAuth } from "./stack.js";
import { newObservedSession, turnText } from "./streaming.js";
import { BenchTauClient } from "./tau-client.js";
import { inBatches, now, round, sleep } from "./stats.js";
import { measureFanOut } from "./translation.js";

/**
 * Fan-out: one session, 1, 10, 100 and 500 subscribers, one streaming turn each (after a warm-up
 * turn per path). Through the gateway, the subscribers are Ask connections on `/rpc` subscribed
 * live (the Translation row's turn, translation.ts): the host streams the turn once to the
 * gateway, which translates it once and writes it to each. Beside it, in the same run, the no-op
 * Node.js relay (bench/node-relay-server.mjs): each subscriber a Tau connection observing the
 * session through it, so the host streams every delta to each and the relay passes each frame on.
 *
 * Per path: deltas whose text reached every subscriber per second (deltas × subscribers, from the
 * submit to the last subscriber's end of the turn), the relay's CPU per delta and subscriber and
 * the host's. The turn is shorter at 100 and 500 subscribers (at most FRAMES_PER_TURN deltas ×
 * subscribers) so the Node.js relay, which carries one frame per delta and subscriber, takes
 * seconds, not minutes.
 */

export interface FanOutPath {
  deltasPerSecond: number;
  ms: number;
  /** Relay (gateway or Node.js relay) CPU per delta delivered to one subscriber, µs. */
  cpuUsPerDelta: number | null;
  /** Tau host CPU per delta delivered to one subscriber, µs. */
  hostCpuUsPerDelta: number | null;
}

export interface FanOutResult {
  subscribers: number;
  deltas: number;
  gateway: FanOutPath;
  node: FanOutPath;
}

export const FAN_OUT_SUBSCRIBERS = [1, 10, 100, 500] as const;
const FRAMES_PER_TURN = 1_000_000;
const SETTLED = Buffer.from('"state":"settled"');
const DELTA = Buffer.from('"type":"session.delta"');

export function fanOutDeltas(subscribers: number, most: number): number {
  return Math.max(1000, Math.min(most, Math.floor(FRAMES_PER_TURN / subscribers)));
}

export interface FanOutSetup {
  hostUrl: string;
  hostPid: number;
  auth: GatewayAuth;
  /** The longest turn (the Streaming row's 10,000 deltas). */
  deltas: number;
}

/**
 * A gateway and a Node.js relay of their own on the given host: the gateway's connection caps are
 * lifted (500 subscribers from one address are more than its default per-address cap).
 */
export async function measureFanOutCurve(setup: FanOutSetup, log: (line: string) => void): Promise<FanOutResult[]> {
  const most = Math.max(...FAN_OUT_SUBSCRIBERS) + 64;
  const extraArgs: string[] = [];
  for (const cap of ["max-connections", "max-connections-per-address"]) if (serveHasFlag(cap)) extraArgs.push(`--${cap}`, String(most));
  const gateway = await startGateway({ upstream: setup.hostUrl, auth: setup.auth, extraArgs });
  try {
    const relay = await startNodeRelay(setup.hostUrl);
    try {
      return await fanOutRows({ ...setup, access: gateway.access, gatewayPid: gateway.process.pid, nodeRelayUrl: relay.url, nodeRelayPid: relay.pid }, log);
    } finally {
      await relay.stop();
    }
  } finally {
    await gateway.process.stop();
  }
}

async function fanOutRows(
  setup: FanOutSetup & { access: Parameters<typeof measureFanOut>[0][number]; gatewayPid: number; nodeRelayUrl: string; nodeRelayPid: number },
  log: (line: string) => void,
): Promise<FanOutResult[]> {
  log("fan-out: warm-up");
  await measureFanOut([setup.access], setup.hostUrl, 1, 1000);
  await nodeRelayTurn(setup.nodeRelayUrl, 1, 1000);
  const results: FanOutResult[] = [];
  for (const subscribers of FAN_OUT_SUBSCRIBERS) {
    const deltas = fanOutDeltas(subscribers, setup.deltas);
    log(`fan-out: ${subscribers} subscriber(s), ${deltas} deltas, gateway`);
    const hostBefore = cpuMs([setup.hostPid]);
    const viaGateway = await measureFanOut([setup.access], setup.hostUrl, subscribers, deltas, [setup.gatewayPid]);
    const hostMid = cpuMs([setup.hostPid]);
    log(`fan-out: ${subscribers} subscriber(s), ${deltas} deltas, Node.js relay`);
    const nodeBefore = cpuMs([setup.nodeRelayPid]);
    const viaNode = await nodeRelayTurn(setup.nodeRelayUrl, subscribers, deltas);
    const nodeAfter = cpuMs([setup.nodeRelayPid]);
    const hostAfter = cpuMs([setup.hostPid]);
    const items = deltas * subscribers;
    results.push({
      subscribers,
      deltas,
      gateway: { deltasPerSecond: viaGateway.deltasPerSecond, ms: viaGateway.ms, cpuUsPerDelta: viaGateway.gatewayCpuUsPerDelta, hostCpuUsPerDelta: cpuPerItemUs(hostBefore, hostMid, items, 2) },
      node: { deltasPerSecond: viaNode.deltasPerSecond, ms: viaNode.ms, cpuUsPerDelta: cpuPerItemUs(nodeBefore, nodeAfter, items, 2), hostCpuUsPerDelta: cpuPerItemUs(hostMid, hostAfter, items, 2) },
    });
  }
  return results;
}

/**
 * The turn through the Node.js relay: `subscribers` Tau connections observing one session, the
 * first submitting; done when every one has seen the turn settle. Delta frames are counted
 * unparsed, so the client side stays cheap.
 */
async function nodeRelayTurn(url: string, subscribers: number, deltas: number): Promise<{ deltasPerSecond: number; ms: number }> {
  const clients = await inBatches(subscribers, 16, () => BenchTauClient.connect(url));
  try {
    const sender = clients[0]!;
    const sessionId = await newObservedSession(sender);
    await Promise.all(clients.slice(1).map((c) => c.call("session.observe", { sessionId })));
    let remaining = subscribers;
    let last = Number.NaN;
    let allDone!: () => void;
    const done = new Promise<void>((resolve) => (allDone = resolve));
    for (const client of clients) {
      let settled = false;
      client.onRaw = (data, at) => {
        if (data.indexOf(DELTA) === -1) return false;
        if (!settled && data.indexOf(SETTLED) !== -1) {
          settled = true;
          last = at;
          if (--remaining === 0) allDone();
        }
        return true;
      };
    }
    const sent = now();
    const response = await sender.request("session.submit", { sessionId, text: turnText(deltas) });
    if (!response.ok) throw new Error(`fan-out through the Node.js relay: session.submit failed: ${response.error?.code} ${response.error?.message}`);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`fan-out through the Node.js relay x${subscribers}: ${remaining} observers without the turn's end after 120 s`)), 120_000)))]).finally(() =>
      clearTimeout(timer),
    );
    const ms = last - sent;
    return { deltasPerSecond: round((deltas * subscribers) / (ms / 1000), 0), ms: round(ms, 1) };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await sleep(100);
  }
}
