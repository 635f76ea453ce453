import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { followFeed } from "../../inspector/feed.js";
import type { ConnectionInfo } from "../../src/gateway/inspector/connection-trace.js";
import type { InspectorEvent, InspectorSnapshot, SequencedFrame } from "../../src/gateway/inspector/inspector-hub.js";
import { writeTokensFile } from "../../test/support/tokens-file.js";
import { CodexTui, hasTmux } from "./support/codex-tui.js";
import { interopRoot, interopRun, type InteropRun } from "./support/gateway-process.js";
import { startServe, type ServeGateway } from "./support/gateway-servers.js";
import { RelayedEditor } from "./support/relayed-editor.js";

/**
 * The inspector watching real clients: one session worked at once from the Codex terminal UI
 * (under tmux, on WebSocket `/`) and an editor (the official ACP SDK through `tau-gateway acp
 * --remote`, on `/acp`), a turn from each, on a `serve --inspector` gateway with a tokens file.
 * An operator follows the feed over HTTP with the page's own module and its own token, as the
 * page does, and reads the session's timeline: both connections with their dialects and the
 * clients' names, every frame both ways with its verdict, each request paired
 * with its answer, and under the turns' events the frames they became on both connections. Every
 * frame is `valid`: the gateway serves every Codex method the pinned terminal UI sends.
 * Skipped without tmux.
 */

const CLIENT_TOKEN = "inspected-clients-token-5e21";
const OPERATOR_TOKEN = "inspector-operator-token-a09c";
const CODEX_VERSION = (JSON.parse(readFileSync(join(interopRoot, "node_modules", "@openai", "codex", "package.json"), "utf8")) as { version: string }).version;

/** What the operator's page holds: the feed's snapshot, then every event after it. */
function operatorFeed(baseUrl: string) {
  const frames: SequencedFrame[] = [];
  const connections = new Map<string, ConnectionInfo>();
  let refused: string | undefined;
  const feed = followFeed({
    url: `${baseUrl}/inspector/feed`,
    token: OPERATOR_TOKEN,
    onEvent(type: string, data: InspectorSnapshot | InspectorEvent) {
      if (type === "snapshot") {
        const snapshot = data as InspectorSnapshot;
        frames.splice(0, frames.length, ...snapshot.frames);
        connections.clear();
        for (const c of snapshot.connections) connections.set(c.id, c);
        return;
      }
      const event = data as InspectorEvent;
      if (event.type === "frame") frames.push(event.frame);
      else if (event.type === "connection") connections.set(event.connection.id, event.connection);
    },
    onState(state: string, detail?: string) {
      if (state === "refused") refused = detail;
    },
  });
  /** Resolves once `holds()`, polled; fails after `timeoutMs` saying what was awaited. */
  const until = async (holds: () => boolean, what: string, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!holds()) {
      if (refused !== undefined) throw new Error(`the feed was refused (${refused}) while waiting for ${what}`);
      if (Date.now() > deadline) throw new Error(`the inspector never showed ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return { frames, connections, until, stop: () => feed.stop() };
}

const parsed = (frame: SequencedFrame) => JSON.parse(frame.message!) as { id?: unknown; method?: string; params?: any; result?: any };
/** A frame, short, for a failure message. */
const shown = (f: SequencedFrame) => `${f.connection}#${f.index} ${f.direction} ${f.kind} ${f.method ?? ""} ${JSON.stringify(f.verdict)} ${f.message?.slice(0, 400)}`;

describe.skipIf(!hasTmux)("the inspector watching the Codex terminal UI and an ACP editor on one session", () => {
  let run: InteropRun;
  let gateway: ServeGateway;
  let baseUrl: string;
  let feed: ReturnType<typeof operatorFeed>;
  let tui: CodexTui;
  let editor: RelayedEditor;
  let sessionId: string;

  /** A GET of the inspector's API as the operator's page makes it (its token; Host is the gateway's own address). */
  const api = async (path: string, token: string | null = OPERATOR_TOKEN) => {
    const response = await fetch(`${baseUrl}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: response.status, body: (await response.json()) as any };
  };

  beforeAll(async () => {
    run = interopRun();
    const tokensFile = writeTokensFile(join(run.cwd, ".."), [
      { id: "laptop", token: CLIENT_TOKEN, tenant: "team" },
      { id: "ops", token: OPERATOR_TOKEN, tenant: "ops", operator: true },
    ]);
    gateway = await startServe([], { ...run.env, TAU_GATEWAY_TOKENS_FILE: tokensFile, TAU_GATEWAY_INSPECTOR: "true" });
    baseUrl = gateway.url.replace("ws://", "http://");
    feed = operatorFeed(baseUrl);
    tui = CodexTui.start({ cwd: run.cwd, home: join(run.cwd, "..", "home"), url: gateway.url, token: CLIENT_TOKEN });
    await tui.shows("Ask Codex to do anything");
  }, 240_000);

  afterAll(async () => {
    tui?.kill();
    await editor?.drop();
    await feed?.stop();
    await gateway?.kill();
    run?.cleanup();
  });

  it("is the operator's to watch: no token, no data; the operator's token sees every tenant", async () => {
    expect(await api("/inspector/api/connections", null)).toMatchObject({ status: 401 });
    expect(await api("/inspector/api/viewer")).toEqual({ status: 200, body: { operator: true, tenant: "ops" } });
  });

  it("shows both clients' connections and every frame of a turn from each with its verdict, all valid, and the session's timeline across both", async () => {
    // The terminal starts the session with its turn; the editor loads it and sends one of its own.
    await tui.send(["Hello from the terminal"]);
    await tui.shows("You said: Hello from the terminal");
    await tui.shows("Worked for");
    sessionId = await tui.threadId();
    editor = await RelayedEditor.connect(gateway.url, CLIENT_TOKEN);
    await editor.agent.request("session/load", { sessionId, cwd: run.cwd, mcpServers: [] });
    const answer = await editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Hello from the editor" }] });
    expect(answer.stopReason).toBe("end_turn");
    await tui.shows("You said: Hello from the editor");
    // And one more from the terminal, now that the editor is attached too.
    await tui.send(["Again from the terminal"]);
    await tui.shows("You said: Again from the terminal");
    await editor.waitFor(() => editor.agentText(sessionId).includes("You said: Again from the terminal"), "the terminal's second turn");

    // The connections, as the operator's page lists them (the feed announces each; the list carries the client's name once it said it).
    const live = () => [...feed.connections.values()].filter((c) => c.closed === undefined);
    await feed.until(() => live().some((c) => c.dialect === "codex") && live().some((c) => c.dialect === "acp"), "a live codex and a live acp connection");
    const listed = (await api("/inspector/api/connections")).body.connections as ConnectionInfo[];
    const codexConnections = live().filter((c) => c.dialect === "codex");
    const acpConnections = live().filter((c) => c.dialect === "acp");
    expect(codexConnections).toHaveLength(1);
    expect(acpConnections).toHaveLength(1);
    const codex = codexConnections[0]!;
    const acp = acpConnections[0]!;
    expect(codex).toMatchObject({ transport: "websocket /", tenant: "team", tokenId: "laptop" });
    expect(acp).toMatchObject({ transport: "websocket /acp", tenant: "team", tokenId: "laptop" });
    const framesOf = (connection: string) => feed.frames.filter((f) => f.connection === connection);
    // The terminal's name and version, from its own initialize.
    const initialize = framesOf(codex.id).find((f) => f.direction === "client" && f.method === "initialize")!;
    const clientInfo = parsed(initialize).params.clientInfo as { name: string; version: string };
    expect(clientInfo.version).toContain(CODEX_VERSION);
    expect(listed.find((c) => c.id === codex.id)!.client).toEqual({ name: clientInfo.name, version: clientInfo.version });
    expect(listed.find((c) => c.id === acp.id)).toMatchObject({ dialect: "acp", tenant: "team" });

    // Every frame both ways, each with its verdict; every request answered (either way).
    const settled = (connection: string) => {
      const frames = framesOf(connection);
      const requests = frames.filter((f) => f.kind === "request");
      return requests.length > 0 && requests.every((r) => frames.some((a) => a.answers?.index === r.index && a.direction !== r.direction));
    };
    await feed.until(() => settled(codex.id) && settled(acp.id), "every request of both connections answered");
    for (const connection of [codex, acp]) {
      const frames = framesOf(connection.id);
      // The feed holds them all (nothing dropped), in order.
      expect(frames.map((f) => f.index)).toEqual(frames.map((_, i) => i + 1));
      expect(new Set(frames.map((f) => f.direction))).toEqual(new Set(["client", "server"]));
      for (const frame of frames) expect(frame.verdict.status, shown(frame)).toEqual(expect.any(String));
      // A real client's frame the validators reject is a finding, listed whole.
      expect(frames.filter((f) => f.verdict.status !== "valid").map(shown)).toEqual([]);
      for (const answer of frames.filter((f) => f.answers)) {
        const request = frames.find((f) => f.index === answer.answers!.index)!;
        expect(request, shown(answer)).toMatchObject({ kind: "request", direction: answer.direction === "client" ? "server" : "client" });
        expect(parsed(request).id).toEqual(parsed(answer).id);
      }
    }
    expect(framesOf(codex.id).filter((f) => f.direction === "client").map((f) => f.method)).toEqual(expect.arrayContaining(["initialize", "thread/start", "turn/start"]));
    expect(framesOf(acp.id).filter((f) => f.direction === "client").map((f) => f.method)).toEqual(expect.arrayContaining(["initialize", "session/load", "session/prompt"]));

    // The session's timeline: its events, and under each turn's events the frames they became on both connections.
    const { status, body: timeline } = await api(`/inspector/api/sessions/${sessionId}`);
    expect(status).toBe(200);
    const completed = timeline.events.filter((e: { type: string }) => e.type === "turn.completed");
    expect(completed.map((e: { payload: { response?: string } }) => e.payload.response)).toEqual([
      "You said: Hello from the terminal",
      "You said: Hello from the editor",
      "You said: Again from the terminal",
    ]);
    const started = timeline.events.filter((e: { type: string }) => e.type === "turn.started");
    for (const turn of [1, 2]) {
      const seqs = new Set<number>(timeline.events.filter((e: { seq: number }) => e.seq >= started[turn].seq && e.seq <= completed[turn].seq).map((e: { seq: number }) => e.seq));
      const under = (connection: string) => framesOf(connection).filter((f) => f.cause?.sessionId === sessionId && f.cause.seq !== undefined && seqs.has(f.cause.seq));
      const turnText = completed[turn].payload.response;
      expect(under(codex.id).map((f) => f.method), turnText).toEqual(expect.arrayContaining(["turn/started", "item/agentMessage/delta", "turn/completed"]));
      expect(under(acp.id).map((f) => f.method), turnText).toContain("session/update");
      expect(under(acp.id).some((f) => parsed(f).params.update.sessionUpdate === "agent_message_chunk"), turnText).toBe(true);
      expect([...under(codex.id), ...under(acp.id)].filter((f) => f.verdict.status !== "valid").map(shown)).toEqual([]);
    }
  });
});
