import { tmpdir } from "node:os";
import { BenchJsonRpcClient } from "./jsonrpc-client.js";
import type { GatewayAccess } from "./stack.js";
import { turnText } from "./streaming.js";
import { BenchTauClient } from "./tau-client.js";
import { inBatches, sleep } from "./stats.js";
import { timeTurn } from "./timed-turn.js";
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

    // Whatever loading the thread or session sent (thread/started, a replayed history) is not the turn's.
    await sleep(50);
    return await timeTurn({
      dialect,
      subscribers: clients.map((client) => ({
        socket: client.socket,
        delivered: () => client.notifications,
        resetDelivered: () => void (client.notifications = 0),
        onMessage: (listener) => void (client.onNotification = listener),
      })),
      endMarker: steps.endMarker,
      deltas,
      lastDeltaAt: () => lastDeltaAt,
      start: () => steps.start(sender, id, turnText(deltas)),
      gatewayPids: gatewayPid ? [gatewayPid] : [],
      timeoutMs,
    });
  } finally {
    await Promise.all([...clients.map((c) => c.close()), observer.close()]);
    await sleep(100);
  }
}
