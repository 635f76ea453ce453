import { tmpdir } from "node:os";
import { cpuMs, cpuPerItemUs } from "./cpu.js";
import { BenchJsonRpcClient } from "./jsonrpc-client.js";
import type { GatewayAccess } from "./stack.js";
import { turnText } from "./streaming.js";
import { BenchTauClient } from "./tau-client.js";
import { inBatches, now, quantile, round, sleep } from "./stats.js";
import type { TranslationResult } from "./translation.js";

/**
 * Translation in the Codex app-server and ACP dialects, measured as the Ask row is
 * (translation.ts): N connections load one thread (Codex: thread/start, then thread/resume on the
 * others) or session (ACP: session/new, then session/load on the others) on the gateway's `/` or
 * `/acp` WebSocket; the first starts a turn (turn/start, session/prompt) with the text the host
 * echoes in Tau deltas. Every connection that loaded it receives the streamed text
 * (`item/agentMessage/delta`, `agent_message_chunk`) and the turn's end (`turn/completed`; ACP
 * tells every connection with a `usage_update`). A Tau connection straight to the host stamps the
 * host's last delta; events/s, deltas/s and lag are as in translation.ts.
 */

export type TranslatedDialect = "codex" | "acp";

interface DialectSteps {
  url(access: GatewayAccess): string;
  jsonrpc: boolean;
  /** In every streamed-text notification, nearly every frame of the turn. */
  streamMarker: Buffer;
  /** In the notification every connection gets when the turn has ended. */
  endMarker: Buffer;
  /** Connects and opens a new thread or session: its id. */
  create(client: BenchJsonRpcClient): Promise<string>;
  /** Connects another client to the same thread or session. */
  load(client: BenchJsonRpcClient, id: string): Promise<unknown>;
  /** Starts the turn; resolves when the dialect answers the request (ACP: when the turn ends). */
  start(client: BenchJsonRpcClient, id: string, text: string): Promise<unknown>;
}

const cwd = tmpdir();

const STEPS: Record<TranslatedDialect, DialectSteps> = {
  codex: {
    url: (access) => `${access.http.replace(/^http/, "ws")}/`,
    jsonrpc: false,
    streamMarker: Buffer.from('"item/agentMessage/delta"'),
    endMarker: Buffer.from('"turn/completed"'),
    async create(client) {
      await client.call("initialize", { clientInfo: { name: "tau-gateway-bench", version: "1" } });
      const { thread } = await client.call<{ thread: { id: string } }>("thread/start", { cwd });
      return thread.id;
    },
    async load(client, threadId) {
      await client.call("initialize", { clientInfo: { name: "tau-gateway-bench", version: "1" } });
      return client.call("thread/resume", { threadId });
    },
    start: (client, threadId, text) => client.call("turn/start", { threadId, input: [{ type: "text", text }] }),
  },
  acp: {
    url: (access) => `${access.http.replace(/^http/, "ws")}/acp`,
    jsonrpc: true,
    streamMarker: Buffer.from('"agent_message_chunk"'),
    endMarker: Buffer.from('"usage_update"'),
    async create(client) {
      await client.call("initialize", { protocolVersion: 1 });
      const { sessionId } = await client.call<{ sessionId: string }>("session/new", { cwd, mcpServers: [] });
      return sessionId;
    },
    async load(client, sessionId) {
      await client.call("initialize", { protocolVersion: 1 });
      return client.call("session/load", { sessionId, cwd, mcpServers: [] });
    },
    start: (client, sessionId, text) => client.call("session/prompt", { sessionId, prompt: [{ type: "text", text }] }),
  },
};

export async function measureDialectTranslation(
  dialect: TranslatedDialect,
  access: GatewayAccess,
  hostUrl: string,
  subscribers: number,
  deltas: number,
  gatewayPid?: number,
  timeoutMs = 120_000,
): Promise<TranslationResult> {
  const steps = STEPS[dialect];
  const clients = await inBatches(subscribers, 16, () => BenchJsonRpcClient.connect(steps.url(access), { headers: access.headers, jsonrpc: steps.jsonrpc, streamMarker: steps.streamMarker }));
  const observer = await BenchTauClient.connect(hostUrl);
  try {
    const sender = clients[0]!;
    const id = await steps.create(sender);
    await Promise.all(clients.slice(1).map((c) => steps.load(c, id)));

    await observer.call("session.observe", { sessionId: id });
    let lastDeltaAt = Number.NaN;
    observer.onStream = (message, at) => {
      if (message.type === "session.delta") lastDeltaAt = at;
    };

    const completedAt: number[] = new Array(subscribers).fill(Number.NaN);
    let remaining = subscribers;
    let allDone!: () => void;
    const done = new Promise<void>((resolve) => (allDone = resolve));
    let disconnected = 0;
    // Whatever loading the thread or session sent (thread/started, a replayed history) is not the turn's.
    await sleep(50);
    clients.forEach((client, i) => {
      client.notifications = 0;
      let settled = false;
      const settle = () => {
        settled = true;
        if (--remaining === 0) allDone();
      };
      client.onNotification = (data, at) => {
        if (!settled && data.indexOf(steps.endMarker) !== -1) {
          completedAt[i] = at;
          settle();
        }
      };
      client.socket.once("close", () => {
        if (settled) return;
        disconnected++;
        settle();
      });
    });

    const cpuBefore = gatewayPid ? cpuMs([gatewayPid]) : Number.NaN;
    const sent = now();
    const started = steps.start(sender, id, turnText(deltas));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([done, started]),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${dialect} translation x${subscribers}: ${remaining} subscribers without the turn's end after ${timeoutMs} ms`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
    const completed = completedAt.filter((at) => !Number.isNaN(at));
    if (!completed.length) throw new Error(`${dialect} translation x${subscribers}: every subscriber was disconnected before the turn's end`);
    const last = Math.max(...completed);
    const cpuAfter = gatewayPid ? cpuMs([gatewayPid]) : Number.NaN;
    const events = clients.reduce((n, c) => n + c.notifications, 0);
    const lags = completed.map((at) => at - lastDeltaAt);
    const ms = last - sent;
    return {
      dialect,
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
