import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { request as httpRequest } from "node:http";
import type { Event } from "../../../generated/ask-v1.0.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { CALL_ECHO, deferred, ECHO_TOOL } from "../../support/echo-tool.js";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { httpTransport, sdkClient, type RecordingTransport } from "../../support/mcp-client.js";
import { startSecureGateway } from "../../support/secure-gateway.js";

/**
 * MCP's Streamable HTTP transport at `/mcp` on a real gateway, with the official SDK client's
 * StreamableHTTPClientTransport over a real socket: a session (Mcp-Session-Id), a tool call's
 * reply streamed as progress on its POST's event stream and its approval answered by elicitation
 * while an Ask client watches the session, the GET stream and a call's stream dropped and resumed with Last-Event-ID
 * without losing what was sent meanwhile, DELETE ending the session; JSON answers for a client
 * that prefers them; and the HTTP layer's refusals. Every message the SDK client read is checked
 * against the official schema.
 */

let gw: TestGateway;
let base: string;
const transports: RecordingTransport[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  gw = await startTestGateway({ commandTools: [ECHO_TOOL] });
  base = gw.rpcUrl.replace(/^ws:/, "http:").replace(/\/rpc$/, "");
});
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await gw?.stop();
});

async function connect(options: { elicitation?: boolean; fetch?: typeof fetch } = {}) {
  const transport = httpTransport(`${base}/mcp`, { fetch: options.fetch });
  const client = sdkClient({ elicitation: options.elicitation });
  if (options.elicitation) client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { decision: "approve" } }));
  await client.connect(transport);
  transports.push(transport);
  clients.push(client);
  return { client, transport };
}

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

/** How many times a subscriber hears that the transcript changed over these events: each prompt, turn start and end, and the first chunk of each message. */
function transcriptChanges(events: readonly Event[]): number {
  const messages = new Set(events.flatMap((e) => (e.type === "model.streaming" ? [e.payload.messageId] : [])));
  return events.filter((e) => ["user.message", "turn.started", "turn.completed"].includes(e.type)).length + messages.size;
}

const INITIALIZE = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };

describe("MCP over Streamable HTTP", () => {
  it("streams a call's reply as progress and answers its approval by elicitation while an Ask client watches", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    // What each POST was answered with, read from a copy of its event stream.
    const answered: Array<Promise<string>> = [];
    const fetching: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === "POST") answered.push(response.clone().text());
      return response;
    };
    const { client, transport } = await connect({ elicitation: true, fetch: fetching });
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);

    const progress: string[] = [];
    const result = await client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: CALL_ECHO } }, undefined, { onprogress: (p) => void progress.push(p.message ?? "") });
    const reply = 'You said: Done\nTool echo-json returned: {"a":7}';
    expect(result.structuredContent).toEqual(expect.objectContaining({ sessionId, status: "completed", text: reply }));
    expect(progress[0]).toBe('[waiting for approval act_1: echo-json {"a":7}]');
    expect(progress.slice(1).join("")).toBe(reply);
    // The call's progress and its form came on the call's own event stream, before its answer.
    const bodies = await Promise.all(answered);
    const callStream = bodies.find((body) => body.includes('"method":"notifications/progress"'))!;
    expect(callStream).toBeDefined();
    expect(callStream.indexOf('"method":"elicitation/create"')).toBeGreaterThan(-1);
    expect(callStream.indexOf('"method":"elicitation/create"')).toBeLessThan(callStream.indexOf('"structuredContent"'));
    expect(callStream.lastIndexOf('"method":"notifications/progress"')).toBeLessThan(callStream.indexOf('"structuredContent"'));

    const turnId = payloadsOf<{ turnId: string }>(ask.eventsOf(sessionId), "turn.started")[0]!.turnId;
    await waitForTerminal(ask, sessionId, turnId);
    expect(payloadsOf(ask.eventsOf(sessionId), "approval.updated")).toEqual([expect.objectContaining({ id: "act_1", status: "approved" })]);
    expect(payloadsOf(ask.eventsOf(sessionId), "tool.result").filter((r) => r.name === "echo-json")).toEqual([expect.objectContaining({ output: '{"a":7}', isError: false })]);
    ask.socket.terminate();
  });

  it("resumes a dropped GET stream with Last-Event-ID, missing nothing sent meanwhile", async () => {
    // The GET streams the SDK client opens, each with the Last-Event-ID it sent; a resume is held until the test lets it go.
    const gets: Array<{ lastEventId: string | null; drop: AbortController }> = [];
    const letResume = deferred<void>();
    const fetching: typeof fetch = async (input, init) => {
      if ((init?.method ?? "GET") !== "GET") return fetch(input, init);
      const lastEventId = new Headers(init?.headers).get("last-event-id");
      const drop = new AbortController();
      gets.push({ lastEventId, drop });
      if (lastEventId !== null) await letResume.promise;
      return fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, drop.signal]) : drop.signal });
    };
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const { client } = await connect({ fetch: fetching });
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    await client.subscribeResource({ uri: `tau://session/${sessionId}` });

    // A first turn: its transcript changes reach the client on the GET stream, each with an event id.
    await ask.request("session/send", { sessionId, content: "One" });
    await eventually(() => payloadsOf(ask.eventsOf(sessionId), "turn.completed").length === 1, "the first turn to end");
    await eventually(() => updates.length === transcriptChanges(ask.eventsOf(sessionId)), "the first turn's updates");
    const perTurn = updates.length;
    expect(perTurn).toBeGreaterThanOrEqual(4);
    expect(gets).toHaveLength(1);

    // The stream drops; a second turn runs while the client cannot reconnect.
    gets[0]!.drop.abort();
    await eventually(() => gets.length === 2, "the client to try to resume");
    expect(gets[1]!.lastEventId).toMatch(/^\d+$/);
    await ask.request("session/send", { sessionId, content: "Two" });
    await eventually(() => payloadsOf(ask.eventsOf(sessionId), "turn.completed").length === 2, "the second turn to end");
    expect(updates).toHaveLength(perTurn);

    // Resumed: what was sent meanwhile is replayed, once, and the stream goes on live.
    letResume.resolve();
    await eventually(() => updates.length === 2 * perTurn, "the second turn's updates to be replayed");
    expect(updates.length).toBe(transcriptChanges(ask.eventsOf(sessionId)));
    await ask.request("session/send", { sessionId, content: "Three" });
    await eventually(() => payloadsOf(ask.eventsOf(sessionId), "turn.completed").length === 3, "the third turn to end");
    await eventually(() => updates.length === transcriptChanges(ask.eventsOf(sessionId)), "the third turn's updates, live");
    expect(updates).toHaveLength(3 * perTurn);
    expect(new Set(updates)).toEqual(new Set([`tau://session/${sessionId}`]));
    ask.socket.terminate();
  });

  it("resumes a call whose event stream dropped mid-turn: the rest of its progress and its answer are replayed", async () => {
    const resumes: string[] = [];
    let dropped = false;
    const fetching: typeof fetch = async (input, init) => {
      const lastEventId = new Headers(init?.headers).get("last-event-id");
      if (lastEventId !== null) resumes.push(lastEventId);
      if (init?.method !== "POST" || typeof init.body !== "string" || !init.body.includes('"tools/call"')) return fetch(input, init);
      const drop = new AbortController();
      const response = await fetch(input, { ...init, signal: init.signal ? AbortSignal.any([init.signal, drop.signal]) : drop.signal });
      const reader = response.body!.getReader();
      let seen = "";
      // The stream as the client reads it: cut right after the first progress it carries.
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) return controller.close();
          controller.enqueue(value);
          seen += new TextDecoder().decode(value);
          if (!dropped && seen.includes('"notifications/progress"')) {
            dropped = true;
            drop.abort();
            controller.error(new Error("connection lost"));
          }
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const { client } = await connect({ fetch: fetching });
    const progress: string[] = [];
    const prompt = "One two three four five six seven eight nine ten";
    const result = await client.callTool({ name: "tau", arguments: { prompt, cwd: gw.cwd } }, undefined, { onprogress: (p) => void progress.push(p.message ?? "") });
    expect(dropped).toBe(true);
    expect(resumes).toHaveLength(1);
    expect(result.structuredContent).toEqual(expect.objectContaining({ status: "completed", text: `You said: ${prompt}` }));
    expect(progress.join("")).toBe(`You said: ${prompt}`);
  });

  it("ends the session on DELETE: its id is then unknown", async () => {
    const { client, transport } = await connect();
    const sessionId = transport.sessionId!;
    expect(await client.ping()).toEqual({});
    await transport.inner.terminateSession();
    const after = await post({ jsonrpc: "2.0", id: 9, method: "ping" }, { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" });
    expect(after.status).toBe(404);
    expect(await after.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found: start a new one with initialize" } });
  });

  it("answers with JSON bodies a client whose initialize prefers them", async () => {
    const init = await post(INITIALIZE, { accept: "application/json, text/event-stream;q=0.5" });
    expect(init.status).toBe(200);
    expect(init.headers.get("content-type")).toMatch(/^application\/json/);
    const session = init.headers.get("mcp-session-id")!;
    expect(await init.json()).toEqual(expect.objectContaining({ id: 0, result: expect.objectContaining({ protocolVersion: "2025-11-25", serverInfo: expect.objectContaining({ name: "tau-gateway" }) }) }));
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    expect((await post({ jsonrpc: "2.0", method: "notifications/initialized" }, headers)).status).toBe(202);
    const listed = await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, headers);
    expect(listed.headers.get("content-type")).toMatch(/^application\/json/);
    const { result } = (await listed.json()) as { result: { tools: Array<{ name: string }> } };
    expect(result.tools.map((t) => t.name)).toEqual(["tau", "tau-reply", "tau-sessions", "tau-history", "tau-interrupt"]);
    expect((await fetch(`${base}/mcp`, { method: "DELETE", headers })).status).toBe(200);
  });

  it("refuses what is no MCP request over HTTP, with a JSON-RPC error", async () => {
    const error = async (response: Response) => ({ status: response.status, body: (await response.json()) as { error: { code: number; message: string } } });
    expect(await error(await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }))).toEqual({
      status: 400,
      body: expect.objectContaining({ error: { code: -32000, message: expect.stringContaining("Mcp-Session-Id header is required") } }),
    });
    expect(await error(await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { capabilities: {} } }))).toEqual({
      status: 400,
      body: expect.objectContaining({ error: { code: -32602, message: expect.stringMatching(/^Invalid params: initialize: params\.protocolVersion/) } }),
    });
    expect(await error(await post("{not json"))).toEqual({ status: 400, body: expect.objectContaining({ error: expect.objectContaining({ code: -32700 }) }) });
    expect(await error(await post(INITIALIZE, { "content-type": "text/plain" }))).toEqual({ status: 415, body: expect.objectContaining({ error: expect.objectContaining({ code: -32000 }) }) });
    expect(await error(await post(INITIALIZE, { accept: "application/json" }))).toEqual({
      status: 406,
      body: expect.objectContaining({ error: expect.objectContaining({ message: expect.stringContaining("Not Acceptable") }) }),
    });
    expect(await error(await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": "no-such-session" }))).toEqual({ status: 404, body: expect.objectContaining({ error: expect.objectContaining({ code: -32001 }) }) });

    const init = await post(INITIALIZE);
    const session = init.headers.get("mcp-session-id")!;
    await init.text();
    const resumed = await fetch(`${base}/mcp`, { headers: { accept: "text/event-stream", "mcp-session-id": session, "last-event-id": "99999" } });
    expect(await error(resumed)).toEqual({ status: 400, body: expect.objectContaining({ error: { code: -32000, message: expect.stringContaining('Last-Event-ID "99999" names no event') } }) });
    expect((await fetch(`${base}/mcp`, { method: "DELETE", headers: { "mcp-session-id": session } })).status).toBe(200);
  });

  it("keeps a session its tenant's: another tenant's token finds no such session, and none gets nothing", async () => {
    const tokens = TokenRegistry.parse(
      JSON.stringify([
        { id: "alice", token: "tok-alice-5e1", tenant: "tenant-a" },
        { id: "bob", token: "tok-bob-9c2", tenant: "tenant-b" },
      ]),
      "tokens.json",
    );
    const secure = await startSecureGateway({ tokens });
    try {
      const transport = httpTransport(`${secure.baseUrl}/mcp`, { requestInit: { headers: { authorization: "Bearer tok-alice-5e1" } } });
      const client = sdkClient();
      await client.connect(transport);
      const started = await client.callTool({ name: "tau", arguments: { prompt: "Alice's", cwd: secure.cwd } });
      expect(started.structuredContent).toEqual(expect.objectContaining({ status: "completed" }));
      const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": transport.sessionId!, "mcp-protocol-version": "2025-11-25" };
      const ping = JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" });
      const asBob = await fetch(`${secure.baseUrl}/mcp`, { method: "POST", headers: { ...headers, authorization: "Bearer tok-bob-9c2" }, body: ping });
      expect(asBob.status).toBe(404);
      const anonymous = await fetch(`${secure.baseUrl}/mcp`, { method: "POST", headers, body: ping });
      expect(anonymous.status).toBe(401);
      expect(await client.ping()).toEqual({});
      expect(transport.problems()).toEqual([]);
      await client.close();

      // With tokens the Host header is not checked: whatever it says, it is no part of the request's handling.
      const odd = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const { port } = new URL(secure.baseUrl);
        const req = httpRequest({ host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { host: "not a host name", authorization: "Bearer tok-bob-9c2", "content-type": "application/json", accept: "application/json, text/event-stream" } }, (res) => {
          let body = "";
          res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk)).on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("error", reject);
        req.end(JSON.stringify(INITIALIZE));
      });
      expect(odd.status).toBe(200);
      expect(odd.body).toContain('"serverInfo"');
    } finally {
      await secure.stop();
    }
  });

  it("lets a browser on an allowed Origin start a session, read its id and end it", async () => {
    const APP = "http://app.example.test";
    const browserGateway = await startSecureGateway({ allowedOrigins: [APP] });
    try {
      const url = `${browserGateway.baseUrl}/mcp`;
      const init = await fetch(url, { method: "POST", headers: { origin: APP, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify(INITIALIZE) });
      expect(init.status).toBe(200);
      expect(init.headers.get("access-control-allow-origin")).toBe(APP);
      expect(init.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("mcp-session-id");
      const session = init.headers.get("mcp-session-id")!;
      await init.text();
      const preflight = await fetch(url, { method: "OPTIONS", headers: { origin: APP, "access-control-request-method": "DELETE", "access-control-request-headers": "mcp-session-id" } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-methods")).toContain("DELETE");
      expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("mcp-session-id");
      expect((await fetch(url, { method: "DELETE", headers: { origin: APP, "mcp-session-id": session } })).status).toBe(200);
      const refused = await fetch(url, { method: "POST", headers: { origin: "http://evil.example.test", "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify(INITIALIZE) });
      expect(refused.status).toBe(403);
    } finally {
      await browserGateway.stop();
    }
  });

  it("sends only messages the official schema accepts", () => {
    expect(transports.flatMap((t) => t.problems())).toEqual([]);
    expect(transports.flatMap((t) => t.fromServer).length).toBeGreaterThan(10);
  });
});
