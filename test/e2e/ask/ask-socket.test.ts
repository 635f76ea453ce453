import { spawn } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { buildGateway } from "../../../src/gateway/app.js";
import { AskTestClient, rpcError } from "../../support/ask-client.js";
import { expectContiguous, openSession, runTurn } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { serveCli } from "../../support/cli.js";
import { listenOnEmbeddedStack } from "../../support/gateway.js";
import { parsePrometheus, sampleValue } from "../../support/prometheus.js";
import { exitWithin, spawnStdio } from "../../support/stdio-child.js";
import { askGatewayDialect } from "../../../src/cli/dialects/ask/gateway.js";

/**
 * The Ask surface on a Unix socket, NDJSON: in the same process as `tau-gateway stdio` (as the Ask
 * host has it: clients attach to the running process and share its sessions) and beside the HTTP
 * front of `tau-gateway serve`. The socket file: mode 0600 unless told otherwise, a stale one
 * replaced on start, a live one or a non-socket refused, ours removed on stop.
 */

const cleanups = cleanupsAfterEach();

function socketDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "ask-socket-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** An Ask client on the Unix socket at `path`, disconnected after the test. */
async function attach(path: string): Promise<AskTestClient & { socket: Socket }> {
  const client = await AskTestClient.unixSocket(path);
  cleanups.push(() => client.socket.destroy());
  return client;
}

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** A socket file nobody listens on, as a process killed with SIGKILL leaves it. */
async function staleSocket(path: string): Promise<void> {
  const holder = spawn(process.execPath, ["-e", `require("node:net").createServer().listen(${JSON.stringify(path)}, () => console.log("up"))`]);
  await new Promise<void>((resolve) => holder.stdout.once("data", () => resolve()));
  const gone = new Promise<void>((resolve) => holder.once("exit", () => resolve()));
  holder.kill("SIGKILL");
  await gone;
  expect(lstatSync(path).isSocket()).toBe(true);
}

describe("tau-gateway stdio --socket", () => {
  it("lets a socket client attach to the running process: the same sessions and events, its own cursors, mode 0600, file removed on exit", async () => {
    // Its directory does not exist yet: it is created (as for one socket per spawn under a sockets directory).
    const path = join(socketDir(), "sockets", "app-server.sock");
    const stdio = spawnStdio(["--socket", path], cleanups);
    const sessionId = (await stdio.client.request("session/create", {})).session.sessionId as string;
    await stdio.client.request("session/subscribe", { sessionId });
    expect(modeOf(path)).toBe(0o600);

    const attached = await attach(path);
    await attached.request("initialize", { client: { name: "attached", version: "1" } });
    const listed = await attached.request("session/list", {});
    expect(listed.sessions.map((s: { sessionId: string }) => s.sessionId)).toContain(sessionId);
    expect(await attached.request("session/subscribe", { sessionId })).toEqual({ subscription: { sessionId, deliveryKind: "replay" } });

    // A turn sent over stdio reaches the socket client too, event for event.
    const { terminal } = await runTurn(stdio.client, sessionId, "hello from stdio");
    expect(terminal.type).toBe("turn.completed");
    await attached.waitFor(() => attached.eventsOf(sessionId).length === stdio.client.eventsOf(sessionId).length, "the socket client to see the whole turn");
    expect(attached.eventsOf(sessionId)).toEqual(stdio.client.eventsOf(sessionId));
    expectContiguous(attached.eventsOf(sessionId));

    // Each client has its own cursor: one that subscribes after the last event gets no backlog, then what follows.
    const lastSeq = stdio.client.eventsOf(sessionId).at(-1)!.seq;
    const late = await attach(path);
    await late.request("session/subscribe", { sessionId, afterSeq: lastSeq });
    const fromSocket = await runTurn(attached, sessionId, "hello from the socket");
    await late.waitForEvent(sessionId, "turn.completed");
    expect(late.eventsOf(sessionId)[0]!.seq).toBe(lastSeq + 1);
    expect(late.eventsOf(sessionId).at(-1)).toEqual(fromSocket.terminal);
    await stdio.client.waitFor(() => stdio.client.eventsOf(sessionId).at(-1)?.type === "turn.completed" && stdio.client.eventsOf(sessionId).length > lastSeq, "stdio to see the socket's turn");
    expect([...stdio.client.invalid, ...attached.invalid, ...late.invalid]).toEqual([]);

    stdio.child.stdin.end();
    expect(await exitWithin(stdio.exit, 15_000)).toEqual({ code: 0, signal: null });
    expect(existsSync(path)).toBe(false);
  });

  it("answers every request a socket client pipelines exactly once (-32013 past the in-flight limit), and skips an oversized line with -32600", async () => {
    const path = join(socketDir(), "limit.sock");
    const stdio = spawnStdio(["--socket", path, "--max-inflight", "8", "--max-message-bytes", "1024"], cleanups);
    await stdio.client.request("initialize", {});
    const attached = await attach(path);
    const answers = await Promise.allSettled(Array.from({ length: 300 }, () => attached.request("session/list", {})));
    const refused = answers.filter((a) => a.status === "rejected");
    expect(answers).toHaveLength(300);
    expect(refused.length).toBeGreaterThan(0);
    expect(answers.length - refused.length).toBeGreaterThanOrEqual(8);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: -32013 });
    const ids = attached.received.filter((m) => (m as { id?: unknown }).id !== undefined).map((m) => (m as { id: unknown }).id);
    expect(new Set(ids).size).toBe(ids.length);

    attached.socket.write(`${JSON.stringify({ id: "big", method: "ping", params: { pad: "x".repeat(2000) } })}\n`);
    expect(await attached.request("ping")).toMatchObject({ status: "ok" });
    expect(attached.received).toContainEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: expect.stringMatching(/more than 1024 bytes was skipped/), data: { limit: 1024 } },
    });
    expect(attached.received.some((m) => (m as { id?: unknown }).id === "big")).toBe(false);
  });

  it("replays a backlog larger than --max-buffered-bytes to a socket client that reads it, as the WebSocket does", async () => {
    const path = join(socketDir(), "backlog.sock");
    const stdio = spawnStdio(["--socket", path, "--max-buffered-bytes", "65536"], cleanups);
    const sessionId = (await stdio.client.request("session/create", {})).session.sessionId as string;
    await stdio.client.request("session/subscribe", { sessionId });
    // One turn streams its long answer in small events: far more than the bound in all.
    await runTurn(stdio.client, sessionId, "q".repeat(20_000));
    const backlog = stdio.client.eventsOf(sessionId);
    expect(backlog.reduce((bytes, event) => bytes + JSON.stringify(event).length, 0)).toBeGreaterThan(2 * 65536);

    const attached = await attach(path);
    let disconnected = false;
    attached.socket.on("close", () => (disconnected = true));
    await attached.request("session/subscribe", { sessionId, afterSeq: 0 });
    await attached.waitFor(() => attached.eventsOf(sessionId).length === backlog.length || disconnected, "the whole backlog");
    expect(disconnected).toBe(false);
    expect(attached.eventsOf(sessionId)).toEqual(backlog);
    expect(await attached.request("ping")).toMatchObject({ status: "ok" });
  });

  it("replaces a stale socket file named by ASK_APP_SERVER_SOCKET, and removes its own on SIGTERM", async () => {
    const path = join(socketDir(), "stale.sock");
    await staleSocket(path);
    const stdio = spawnStdio([], cleanups, { ASK_APP_SERVER_SOCKET: path });
    await stdio.client.request("initialize", {});
    const attached = await attach(path);
    expect(await attached.request("ping")).toMatchObject({ status: "ok" });
    stdio.child.kill("SIGTERM");
    expect(await exitWithin(stdio.exit, 15_000)).toEqual({ code: 0, signal: null });
    expect(existsSync(path)).toBe(false);
  });

  it("refuses to start on a socket another process listens on, or on a file that is not a socket, and leaves both alone", async () => {
    const dir = socketDir();
    const live = join(dir, "live.sock");
    const server = createServer((client) => client.end());
    await new Promise<void>((resolve) => server.listen(live, () => resolve()));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const plain = join(dir, "plain-file");
    writeFileSync(plain, "keep me");

    for (const [path, message] of [
      [live, /another process is already listening/],
      [plain, /is not a socket/],
    ] as const) {
      const stdio = spawnStdio(["--socket", path], cleanups);
      expect(await exitWithin(stdio.exit, 30_000)).toEqual({ code: 1, signal: null });
      expect(stdio.stderr()).toMatch(message);
      expect(existsSync(path)).toBe(true);
    }
    expect(lstatSync(live).isSocket()).toBe(true);
  });
});

describe("tau-gateway serve --socket", () => {
  it("serves the Ask surface on the socket beside /rpc: tenant default under tokens, the same sessions, the configured mode, metrics", async () => {
    const path = join(socketDir(), "gateway.sock");
    const gateway = await cleanups.stopAfterTest(
      listenOnEmbeddedStack({ cwdPrefix: "ask-socket-", eventRetention: 1000 }, (stack) =>
        buildGateway({
          tauUpstream: { url: stack.url! },
          upstream: stack.upstream!,
          dialects: [askGatewayDialect(stack.ask!, { jsonrpc: { jsonrpcMember: "include" }, socket: { path, mode: 0o660 } })],
          tokens: TokenRegistry.single("s3cret"),
        }),
      ),
    );
    expect(modeOf(path)).toBe(0o660);
    const ws = await AskTestClient.websocket(`${gateway.baseUrl.replace("http://", "ws://")}/rpc`, { headers: { authorization: "Bearer s3cret" } });
    cleanups.push(() => ws.socket.terminate());
    const sessionId = await openSession(ws);

    // The socket client presents no token and acts for tenant "default", the single token's tenant.
    const attached = await attach(path);
    const listed = await attached.request("session/list", {});
    expect(listed.sessions.map((s: { sessionId: string }) => s.sessionId)).toContain(sessionId);
    await attached.request("session/subscribe", { sessionId });
    const { terminal } = await runTurn(ws, sessionId, "seen on both");
    await attached.waitForEvent(sessionId, "turn.completed");
    expect(attached.eventsOf(sessionId).at(-1)).toEqual(terminal);

    const samples = parsePrometheus(await (await fetch(`${gateway.baseUrl}/metrics`, { headers: { authorization: "Bearer s3cret" } })).text());
    expect(sampleValue(samples, "tau_gateway_connections", { route: "socket" })).toBe(1);
    expect(sampleValue(samples, "tau_gateway_connections_total", { route: "socket" })).toBe(1);
    expect(sampleValue(samples, "tau_gateway_requests_total", { dialect: "ask", method: "session/list", outcome: "ok" })).toBeGreaterThanOrEqual(1);
    expect([...ws.invalid, ...attached.invalid]).toEqual([]);
  });

  it("drains like the other transports: stops accepting (file gone), refuses new requests with -32012, closes its clients with the app", async () => {
    const path = join(socketDir(), "drain.sock");
    const gateway = await cleanups.stopAfterTest(
      listenOnEmbeddedStack({ cwdPrefix: "ask-socket-", eventRetention: 1000 }, (stack) =>
        buildGateway({
          tauUpstream: { url: stack.url! },
          upstream: stack.upstream!,
          dialects: [askGatewayDialect(stack.ask!, { jsonrpc: { jsonrpcMember: "include" }, socket: { path, mode: 0o600 } })],
          drainTimeoutMs: 2000,
        }),
      ),
    );
    const attached = await attach(path);
    expect(await attached.request("ping")).toMatchObject({ status: "ok" });
    const closed = new Promise<void>((resolve) => attached.socket.once("close", () => resolve()));

    const outcome = await gateway.app.drain.drain();
    expect(outcome.drained).toBe(true);
    expect(existsSync(path)).toBe(false);
    expect(await rpcError(attached.request("ping"))).toMatchObject({ code: -32012 });
    await gateway.app.close();
    await closed;
  });

  it("as a command: TAU_GATEWAY_SOCKET names the socket, mode 0600 by default, removed on SIGTERM with exit 0", async () => {
    const path = join(socketDir(), "serve.sock");
    const served = await serveCli(["--port", "0"], cleanups, { TAU_GATEWAY_SOCKET: path });
    expect(modeOf(path)).toBe(0o600);
    const attached = await attach(path);
    expect(await attached.request("ping")).toMatchObject({ status: "ok" });
    served.child.kill("SIGTERM");
    expect(await served.exit).toEqual({ code: 0, signal: null });
    expect(existsSync(path)).toBe(false);
  });
});
