import { tmpdir } from "node:os";
import { BenchAskClient } from "./ask-client.js";
import { cpuMs } from "./cpu.js";
import { BenchJsonRpcClient } from "./jsonrpc-client.js";
import { startNodeRelay } from "./node-relay.js";
import { residentKiB } from "./processes.js";
import { serveHasFlag, startGateway, startHost, type GatewayAccess, type GatewayAuth } from "./stack.js";
import { BenchTauClient } from "./tau-client.js";
import { inBatches, round, sleep } from "./stats.js";

/**
 * Sessions at scale: what the gateway holds per idle session and per attached client. A fresh
 * gateway per size (10, 100, 1,000 sessions) on one Tau host of its own:
 *
 * 1. one Ask connection creates N sessions (`session/create`) and leaves them idle: the RSS and CPU
 *    this adds, per session;
 * 2. each session gets 3 clients, one of each bridged dialect, each on its own WebSocket: Ask
 *    (`session/subscribe`, live), Codex app-server (`initialize`, `thread/resume`) and ACP
 *    (`initialize`, `session/load`): the RSS and CPU this adds, per client;
 * 3. all of it idle for a few seconds: the gateway's CPU per session per second.
 *
 * Beside it, in the same run, the no-op Node.js relay (bench/node-relay-server.mjs) doing what a
 * client of the bare Tau protocol would: one connection creating the N sessions, then 3N
 * connections each observing one (`session.observe`), every connection with its own upstream
 * connection to the host. It keeps no session state, so its per-session figures are the floor of
 * a relay and its per-client ones the floor of a Node.js WebSocket with an upstream.
 *
 * RSS counts garbage not yet collected too: upper bounds, read after a settling pause.
 */

export interface SessionCosts {
  baselineMiB: number;
  sessionsMiB: number;
  attachedMiB: number;
  rssPerSessionKiB: number;
  rssPerClientKiB: number;
  cpuPerSessionUs: number | null;
  cpuPerClientUs: number | null;
  /** CPU over the idle window, µs per session per second. */
  idleCpuUsPerSessionSecond: number | null;
}

export interface SessionScaleResult {
  sessions: number;
  clientsPerSession: number;
  gateway: SessionCosts;
  /** The no-op Node.js relay with the same sessions and clients as bare Tau connections. */
  node: SessionCosts;
}

const IDLE_MS = 3_000;
const CLIENTS_PER_SESSION = 3;
const cwd = tmpdir();

type Closable = { close(): Promise<void> };

interface Subject {
  pid: number;
  /** Creates `count` sessions over one connection (kept open until `close`): their ids. */
  createSessions(count: number): Promise<string[]>;
  /** Attaches the clients of one session. */
  attach(sessionId: string): Promise<Closable[]>;
  /** One session created and attached and everything closed again: code loaded, validators compiled. */
  warm(): Promise<void>;
  close(): Promise<void>;
}

export async function measureSessionScale(sizes: readonly number[], auth: GatewayAuth, log: (line: string) => void): Promise<SessionScaleResult[]> {
  const host = await startHost();
  const hostUrl = host.match[1]!;
  try {
    const results: SessionScaleResult[] = [];
    for (const sessions of sizes) {
      log(`sessions: ${sessions} sessions × ${CLIENTS_PER_SESSION} clients, gateway`);
      const gateway = await measureSubject(await gatewaySubject(hostUrl, auth, sessions * (CLIENTS_PER_SESSION + 1) + 64), sessions);
      log(`sessions: ${sessions} sessions × ${CLIENTS_PER_SESSION} clients, Node.js relay`);
      const node = await measureSubject(await nodeRelaySubject(hostUrl), sessions);
      results.push({ sessions, clientsPerSession: CLIENTS_PER_SESSION, gateway, node });
    }
    return results;
  } finally {
    await host.stop();
  }
}

async function measureSubject(subject: Subject, sessions: number): Promise<SessionCosts> {
  const held: Closable[] = [];
  try {
    await subject.warm();
    const baseline = await settled(subject.pid);
    const ids = await subject.createSessions(sessions);
    const created = await settled(subject.pid);
    const attachedLists = await inBatches(ids.length, 16, (i) => subject.attach(ids[i]!));
    for (const list of attachedLists) held.push(...list);
    const attached = await settled(subject.pid);
    await sleep(IDLE_MS);
    const idleCpu = cpuMs([subject.pid]) - attached.cpu;
    const clients = sessions * CLIENTS_PER_SESSION;
    const perUs = (ms: number, items: number) => (Number.isFinite(ms) ? round((ms * 1000) / items, 1) : null);
    return {
      baselineMiB: round(baseline.rssKiB / 1024, 1),
      sessionsMiB: round(created.rssKiB / 1024, 1),
      attachedMiB: round(attached.rssKiB / 1024, 1),
      rssPerSessionKiB: round((created.rssKiB - baseline.rssKiB) / sessions, 1),
      rssPerClientKiB: round((attached.rssKiB - created.rssKiB) / clients, 1),
      cpuPerSessionUs: perUs(created.cpu - baseline.cpu, sessions),
      cpuPerClientUs: perUs(attached.cpu - created.cpu, clients),
      idleCpuUsPerSessionSecond: Number.isFinite(idleCpu) ? round((idleCpu * 1000) / sessions / (IDLE_MS / 1000), 2) : null,
    };
  } finally {
    await inBatches(held.length, 100, (i) => held[i]!.close());
    await subject.close();
  }
}

/**
 * RSS after the process has finished its work and any lazy work: read a few times, keep the last.
 * CPU is read first, so the pause's own (idle) CPU is not charged to the step.
 */
async function settled(pid: number): Promise<{ rssKiB: number; cpu: number }> {
  const cpu = cpuMs([pid]);
  let rssKiB = Number.NaN;
  for (let i = 0; i < 5; i++) {
    await sleep(200);
    rssKiB = residentKiB(pid);
  }
  return { rssKiB, cpu };
}

async function gatewaySubject(hostUrl: string, auth: GatewayAuth, connections: number): Promise<Subject> {
  // All connections come from one address and stay quiet: lift the caps and the idle timeout, or they are what is measured.
  const extraArgs: string[] = [];
  for (const cap of ["max-connections", "max-connections-per-address"]) if (serveHasFlag(cap)) extraArgs.push(`--${cap}`, String(connections));
  if (serveHasFlag("idle-timeout-ms")) extraArgs.push("--idle-timeout-ms", "0");
  const { process: gateway, access } = await startGateway({ upstream: hostUrl, auth, extraArgs });
  let creator: BenchAskClient | undefined;
  const subject: Subject = {
    pid: gateway.pid,
    async createSessions(count) {
      creator = await BenchAskClient.connect(access.rpc, access.headers);
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push((await creator.call<{ session: { sessionId: string } }>("session/create", {})).session.sessionId);
      return ids;
    },
    attach: (sessionId) => Promise.all([attachAsk(access, sessionId), attachCodex(access, sessionId), attachAcp(access, sessionId)]),
    async warm() {
      const first = await BenchAskClient.connect(access.rpc, access.headers);
      const { session } = await first.call<{ session: { sessionId: string } }>("session/create", {});
      const clients = await subject.attach(session.sessionId);
      await Promise.all([first, ...clients].map((c) => c.close()));
    },
    async close() {
      await creator?.close();
      await gateway.stop();
    },
  };
  return subject;
}

async function attachAsk(access: GatewayAccess, sessionId: string): Promise<Closable> {
  const client = await BenchAskClient.connect(access.rpc, access.headers);
  await client.call("session/subscribe", { sessionId, deliveryKind: "live" });
  return client;
}

async function attachCodex(access: GatewayAccess, threadId: string): Promise<Closable> {
  const client = await BenchJsonRpcClient.connect(`${access.http.replace(/^http/, "ws")}/`, { headers: access.headers, jsonrpc: false, streamMarker: Buffer.from('"item/agentMessage/delta"') });
  await client.call("initialize", { clientInfo: { name: "tau-gateway-bench", version: "1" } });
  await client.call("thread/resume", { threadId });
  return client;
}

async function attachAcp(access: GatewayAccess, sessionId: string): Promise<Closable> {
  const client = await BenchJsonRpcClient.connect(`${access.http.replace(/^http/, "ws")}/acp`, { headers: access.headers, jsonrpc: true, streamMarker: Buffer.from('"agent_message_chunk"') });
  await client.call("initialize", { protocolVersion: 1 });
  await client.call("session/load", { sessionId, cwd, mcpServers: [] });
  return client;
}

async function nodeRelaySubject(hostUrl: string): Promise<Subject> {
  const relay = await startNodeRelay(hostUrl);
  let creator: BenchTauClient | undefined;
  const create = async (client: BenchTauClient) =>
    (await client.call<{ sessionId: string }>("session.create", { executionEnvironment: { kind: "local", cwd }, attributes: { source: "bench" } })).sessionId;
  const observer = async (sessionId: string) => {
    const client = await BenchTauClient.connect(relay.url);
    await client.call("session.observe", { sessionId });
    return client;
  };
  const subject: Subject = {
    pid: relay.pid,
    async createSessions(count) {
      creator = await BenchTauClient.connect(relay.url);
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push(await create(creator));
      return ids;
    },
    attach: (sessionId) => Promise.all(Array.from({ length: CLIENTS_PER_SESSION }, () => observer(sessionId))),
    async warm() {
      const first = await BenchTauClient.connect(relay.url);
      const clients = await subject.attach(await create(first));
      await Promise.all([first, ...clients].map((c) => c.close()));
    },
    async close() {
      await creator?.close();
      await relay.stop();
    },
  };
  return subject;
}
