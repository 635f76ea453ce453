import { describe, expect, it } from "vitest";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { AskTestClient, rpcError } from "../../support/ask-client.js";
import { openSession, runTurn } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { serveCli, startCliProcess, type ListeningCli, type ServingCli } from "../../support/cli.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { parsePrometheus, sampleValue } from "../../support/prometheus.js";
import { TauTestClient } from "../../support/tau-client.js";

/**
 * One gateway in front of two Tau hosts, each a process of its own: new sessions spread over both,
 * every request for a session reaches its host, lists join both hosts, and a host killed with
 * SIGKILL fails only its own sessions (the dialect's -32012) while the other host's go on and new
 * sessions land on it.
 */

const cleanups = cleanupsAfterEach();
const HOST_LISTENING = /^tau host listening on (ws:\/\/127\.0\.0\.1:\d+)$/m;

async function startHost(): Promise<ListeningCli> {
  return startCliProcess(["host", "--port", "0"], HOST_LISTENING, cleanups);
}

async function gatewayOver(hosts: ListeningCli[]): Promise<ServingCli> {
  return serveCli(["--port", "0", "--log-level", "silent", ...hosts.flatMap((host) => ["--upstream", host.address])], cleanups);
}

/** The session ids a Tau host holds, asked of the host itself. */
async function sessionsOn(host: ListeningCli): Promise<string[]> {
  const client = await TauTestClient.connect(host.address);
  try {
    await client.initialize();
    const response = await client.request("session.list", {});
    return (response as { result: { sessions: Array<{ sessionId: string }> } }).result.sessions.map((s) => s.sessionId).sort();
  } finally {
    await client.close();
  }
}

async function killed(host: ListeningCli): Promise<void> {
  host.child.kill("SIGKILL");
  expect(await host.exit).toEqual({ code: null, signal: "SIGKILL" });
}

async function askClient(gw: ServingCli): Promise<AskTestClient> {
  const client = await AskTestClient.websocket(`${gw.baseUrl.replace("http://", "ws://")}/rpc`);
  cleanups.push(() => client.socket.terminate());
  return client;
}

async function readyz(gw: ServingCli): Promise<{ status: number; body: any }> {
  const response = await fetch(`${gw.baseUrl}/readyz`);
  return { status: response.status, body: await response.json() };
}

async function waitUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every session of the Ask list, page by page (`limit` per page), following the cursors. */
async function listAll(client: AskTestClient, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const result = await client.request("session/list", { limit, ...(cursor ? { cursor } : {}) });
    ids.push(...result.sessions.map((s: { sessionId: string }) => s.sessionId));
    if (result.nextCursor === null) return ids;
    cursor = result.nextCursor;
  }
  throw new Error("session/list kept returning a cursor");
}

describe("two Tau hosts behind one gateway (Ask)", () => {
  it("spreads sessions, joins lists, finds sessions it did not create, and survives losing one host", async () => {
    const [a, b] = await Promise.all([startHost(), startHost()]);
    const first = await gatewayOver([a, b]);
    const client = await askClient(first);

    const created: string[] = [];
    for (let i = 0; i < 4; i++) created.push(await openSession(client));
    const [onA, onB] = await Promise.all([sessionsOn(a), sessionsOn(b)]);
    expect(onA).toHaveLength(2);
    expect(onB).toHaveLength(2);
    expect([...onA, ...onB].sort()).toEqual([...created].sort());
    for (const sessionId of created) {
      expect((await runTurn(client, sessionId, `hello ${sessionId}`)).terminal).toMatchObject({ type: "turn.completed", payload: { response: `You said: hello ${sessionId}` } });
    }
    // Pages of 3 over both hosts: every session once, in one order (newest first).
    const listed = await listAll(client, 3);
    expect([...listed].sort()).toEqual([...created].sort());
    expect(listed).toEqual([...created].reverse());

    // A gateway that never saw these sessions finds each on its host.
    first.child.kill("SIGKILL");
    await first.exit;
    const gw = await gatewayOver([a, b]);
    const other = await askClient(gw);
    await other.request("initialize", { client: { name: "e2e", version: "1" } });
    for (const sessionId of [onA[0]!, onB[0]!]) {
      await other.request("session/subscribe", { sessionId });
      expect((await runTurn(other, sessionId, "found")).terminal).toMatchObject({ type: "turn.completed", payload: { response: "You said: found" } });
    }
    expect(await readyz(gw)).toMatchObject({ status: 200, body: { status: "ready", upstream: { connected: true, hosts: [{ host: a.address, connected: true }, { host: b.address, connected: true }] } } });

    await killed(a);
    await waitUntil(async () => (await readyz(gw)).body.upstream?.hosts?.[0]?.connected === false, "the gateway to see host A gone");
    // A's sessions: -32012, whichever way they are reached.
    for (const sessionId of onA) {
      expect((await rpcError(other.request("session/send", { sessionId, content: "anyone?" }))).code).toBe(-32012);
    }
    expect((await rpcError(other.request("session/abort", { sessionId: onA[0] }))).code).toBe(-32012);
    // B's sessions keep working, including one this gateway had not opened yet.
    for (const sessionId of onB) {
      await other.request("session/subscribe", { sessionId });
      expect((await runTurn(other, sessionId, "still here")).terminal).toMatchObject({ type: "turn.completed", payload: { response: "You said: still here" } });
    }
    // New sessions land on the live host, and the list shows what the live host has.
    const fresh = [await openSession(other), await openSession(other)];
    expect(await sessionsOn(b)).toEqual([...onB, ...fresh].sort());
    expect((await listAll(other, 2)).sort()).toEqual([...onB, ...fresh].sort());
    // Still ready (new sessions have a host), and the host that is down shows as such.
    const health = await readyz(gw);
    expect(health).toMatchObject({ status: 200, body: { upstream: { hosts: [{ host: a.address, connected: false, reason: expect.any(String) }, { host: b.address, connected: true }] } } });
    const metrics = parsePrometheus(await (await fetch(`${gw.baseUrl}/metrics`)).text());
    expect(sampleValue(metrics, "tau_gateway_upstream_connected", { host: a.address })).toBe(0);
    expect(sampleValue(metrics, "tau_gateway_upstream_connected", { host: b.address })).toBe(1);
    expect(other.invalid).toEqual([]);
  }, 120_000);
});

describe("two Tau hosts behind one gateway (Codex app-server)", () => {
  it("spreads threads, joins thread/list, and fails only the killed host's threads with -32012", async () => {
    const [a, b] = await Promise.all([startHost(), startHost()]);
    const gw = await gatewayOver([a, b]);
    const client = await CodexTestClient.websocket(`${gw.baseUrl.replace("http://", "ws://")}/`);
    cleanups.push(() => client.socket.terminate());
    await client.initialize();

    const threads: string[] = [];
    for (let i = 0; i < 4; i++) threads.push((await client.request("thread/start", {})).thread.id);
    const [onA, onB] = await Promise.all([sessionsOn(a), sessionsOn(b)]);
    expect([onA.length, onB.length]).toEqual([2, 2]);
    for (const threadId of threads) expect((await client.turn(threadId, "hello")).completed.params.turn.status).toBe("completed");
    expect((await client.request("thread/list", {})).data.map((t: { id: string }) => t.id).sort()).toEqual([...threads].sort());

    await killed(b);
    await waitUntil(async () => (await readyz(gw)).body.upstream?.hosts?.[1]?.connected === false, "the gateway to see host B gone");
    for (const threadId of onB) {
      const error = await rpcError(client.request("turn/start", { threadId, input: [{ type: "text", text: "anyone?", text_elements: [] }] }));
      expect(error.code).toBe(-32012);
    }
    for (const threadId of onA) expect((await client.turn(threadId, "still here")).completed.params.turn.status).toBe("completed");
    const fresh = (await client.request("thread/start", {})).thread.id as string;
    expect(await sessionsOn(a)).toEqual([...onA, fresh].sort());
    expect((await client.turn(fresh, "new")).completed.params.turn.status).toBe("completed");
    expect((await client.request("thread/list", {})).data.map((t: { id: string }) => t.id).sort()).toEqual([...onA, fresh].sort());
    expect(client.invalid).toEqual([]);
  }, 120_000);
});

describe("two Tau hosts behind one gateway (ACP)", () => {
  it("spreads sessions, joins session/list, and fails only the killed host's sessions with -32012", async () => {
    const [a, b] = await Promise.all([startHost(), startHost()]);
    const gw = await gatewayOver([a, b]);
    const client = await RawAcpClient.connect(`${gw.baseUrl.replace("http://", "ws://")}/acp`);
    cleanups.push(() => client.close());
    await client.initialize();
    const cwd = process.cwd();
    const newSession = async () => (await client.request("session/new", { cwd, mcpServers: [] })).result.sessionId as string;
    const prompt = (sessionId: string, text: string) => client.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    const listed = async () => (await client.request("session/list", {})).result.sessions.map((s: { sessionId: string }) => s.sessionId).sort();

    const sessions = [await newSession(), await newSession()];
    const [onA, onB] = await Promise.all([sessionsOn(a), sessionsOn(b)]);
    expect([onA.length, onB.length]).toEqual([1, 1]);
    for (const sessionId of sessions) expect((await prompt(sessionId, "hello")).result).toEqual({ stopReason: "end_turn" });
    expect(await listed()).toEqual([...sessions].sort());

    await killed(a);
    await waitUntil(async () => (await readyz(gw)).body.upstream?.hosts?.[0]?.connected === false, "the gateway to see host A gone");
    expect((await prompt(onA[0]!, "anyone?")).error).toMatchObject({ code: -32012 });
    expect((await prompt(onB[0]!, "still here")).result).toEqual({ stopReason: "end_turn" });
    const fresh = await newSession();
    expect(await sessionsOn(b)).toEqual([onB[0]!, fresh].sort());
    expect((await prompt(fresh, "new")).result).toEqual({ stopReason: "end_turn" });
    expect(await listed()).toEqual([onB[0]!, fresh].sort());
  }, 120_000);
});
