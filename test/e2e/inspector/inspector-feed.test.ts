import { describe, expect, it } from "vitest";
import { SseParser } from "../../../inspector/feed.js";
import type { SequencedFrame } from "../../../src/gateway/inspector/inspector-hub.js";
import { TranscriptChecker } from "../../../src/validation/transcript.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { TauTestClient } from "../../support/tau-client.js";
import { watchInspectorFeed } from "../../support/inspector-feed-watch.js";
import { driveTraffic, startInspectorGateway } from "../../support/inspector-gateway.js";

/**
 * The inspector's data over real sockets: every client frame reaches the feed with the verdict
 * `tau-gateway validate` gives it, answers are paired with their requests, a dropped feed resumes
 * from Last-Event-ID with only what it missed, and a connection downloads as a recording.
 */

const cleanups = cleanupsAfterEach();

const watch = (url: string) => watchInspectorFeed(url, cleanups);

describe("the inspector feed", () => {
  it("shows an Ask turn and a Codex turn with the validator's verdicts, pairing and the invalid frame's pointer", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const feed = await watch(`${gw.baseUrl}/inspector/feed`);
    const traffic = await driveTraffic(gw, cleanups);
    await feed.until(() => feed.frames.some((f) => f.dialect === "codex" && f.verdict.status === "invalid"), "the invalid Codex frame");

    const ask = feed.frames.filter((f) => f.dialect === "ask");
    expect(ask.find((f) => f.method === "session/send")).toMatchObject({ direction: "client", kind: "request", session: traffic.sessionId, verdict: { status: "valid" } });
    expect(ask.some((f) => f.method === "session/event" && f.message!.includes('"turn.completed"'))).toBe(true);
    const codex = feed.frames.filter((f) => f.dialect === "codex");
    expect(codex.some((f) => f.method === "turn/completed" && f.session === traffic.threadId)).toBe(true);
    // Every frame the gateway and these well-behaved clients exchanged is valid but the bad request.
    const notValid = feed.frames.filter((f) => f.verdict.status !== "valid");
    expect(notValid).toHaveLength(1);
    expect(notValid[0]).toMatchObject({ direction: "client", method: "turn/start", verdict: { status: "invalid", subject: "turn/start" } });
    expect(notValid[0]!.verdict.issues[0]!.pointer).toMatch(/^\/params\/input/);
    // Its error answer is paired with it.
    await feed.until(() => feed.frames.some((f) => f.kind === "error" && f.answers?.index === notValid[0]!.index && f.connection === notValid[0]!.connection), "the error answer");

    const created = ask.find((f) => f.method === "session/create")!;
    const answer = ask.find((f) => f.answers?.index === created.index)!;
    expect(answer).toMatchObject({ direction: "server", kind: "response" });
    expect(answer.answers!.latencyMs).toBeGreaterThanOrEqual(0);

    const codexConnection = feed.connections.get(notValid[0]!.connection);
    expect(codexConnection).toMatchObject({ dialect: "codex", transport: "websocket /" });
    const listed = (await (await fetch(`${gw.baseUrl}/inspector/api/connections`)).json()) as { connections: any[] };
    expect(listed.connections.find((c) => c.id === codexConnection!.id).client).toMatchObject({ name: expect.any(String) });
  });

  it("downloads a connection as a recording that the validator reads to the same verdicts", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    await driveTraffic(gw, cleanups);
    const codex = gw.hub.snapshot().connections.find((c) => c.dialect === "codex")!;
    const response = await fetch(`${gw.baseUrl}/inspector/api/connections/${codex.id}/transcript`);
    expect(response.headers.get("content-disposition")).toBe(`attachment; filename="${codex.id}.jsonl"`);
    const lines = (await response.text()).trimEnd().split("\n");
    expect(JSON.parse(lines[0]!)).toMatchObject({ recording: { format: 1, dialect: "codex", connection: codex.id } });
    const checker = new TranscriptChecker({ dialect: "codex" });
    const verdicts = lines.slice(1).map((line) => checker.line(line));
    const kept = gw.hub.trace(codex.id)!.frames();
    expect(verdicts.map((v) => v.ok)).toEqual(kept.map((f) => f.verdict.status === "valid"));
    expect(verdicts.filter((v) => !v.ok)).toHaveLength(1);
  });

  it("shows Ask over plain HTTP as one connection per HTTP connection", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const post = (body: unknown) => fetch(`${gw.baseUrl}/rpc`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await post({ jsonrpc: "2.0", id: 1, method: "session/list", params: {} })).status).toBe(200);
    const http = gw.hub.snapshot().connections.filter((c) => c.transport === "http POST /rpc");
    expect(http).toHaveLength(1);
    const frames = gw.hub.trace(http[0]!.id)!.frames();
    expect(frames.map((f) => [f.direction, f.kind, f.verdict.status])).toEqual([
      ["client", "request", "valid"],
      ["server", "response", "valid"],
    ]);
  });

  it("resumes from Last-Event-ID with only the events it missed", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const first = await watch(`${gw.baseUrl}/inspector/feed`);
    await first.until(() => first.lastSeq() >= 0, "the snapshot");
    const ws = await import("ws");
    const socket = new ws.WebSocket(gw.wsUrl("/acp"));
    cleanups.push(() => socket.close());
    await new Promise((resolve) => socket.once("open", resolve));
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientInfo: { name: "resume-test", version: "9" } } }));
    await first.until(() => first.frames.length >= 2, "the initialize exchange");
    const seen = first.lastSeq();
    await first.stop();
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "no/such/method" }));
    await new Promise((resolve) => socket.once("message", resolve));

    const controller = new AbortController();
    cleanups.push(() => controller.abort());
    const response = await fetch(`${gw.baseUrl}/inspector/feed`, { headers: { "last-event-id": String(seen) }, signal: controller.signal });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new SseParser();
    const events: { id?: string; event: string; data: string }[] = [];
    while (events.length < 2) events.push(...parser.push((await reader.read()).value ?? ""));
    expect(events.map((e) => [e.event, Number(e.id)])).toEqual([
      ["frame", seen + 1],
      ["frame", seen + 2],
    ]);
    const missed = events.map((e) => JSON.parse(e.data).frame as SequencedFrame);
    expect(missed[0]).toMatchObject({ direction: "client", method: "no/such/method", verdict: { status: "unknown-method" } });
    expect(missed[1]).toMatchObject({ direction: "server", kind: "error", answers: { index: missed[0]!.index } });
    expect(gw.hub.snapshot().connections.find((c) => c.dialect === "acp")!.client).toEqual({ name: "resume-test", version: "9" });
  });

  it("follows the /tau passthrough's delta revisions through a turn and finds no gap in them", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const client = await TauTestClient.connect(gw.wsUrl("/tau"));
    cleanups.push(() => client.close());
    await client.initialize();
    const sessionId = await client.createSession(gw.cwd);
    await client.call("session.observe", { sessionId });
    await client.call("session.submit", { sessionId, text: "through the inspector", historyEntryId: "t1" });
    const tau = gw.hub.snapshot().connections.find((c) => c.dialect === "tau")!;
    const frames = gw.hub.trace(tau.id)!.frames();
    const deltas = frames.filter((f) => f.method === "session.delta");
    expect(deltas.length).toBeGreaterThan(2);
    expect(frames.filter((f) => f.verdict.status !== "valid")).toEqual([]);
  });
});

