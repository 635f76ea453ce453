import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { expectContiguous } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { runCommand } from "../../support/cli.js";
import { startOperatedGateway, waitUntil, type OperatedGatewayOptions } from "../../support/operated-gateway.js";
import { sampleValue } from "../../support/prometheus.js";
import { errorOf, resultOf } from "../../support/tau-client.js";

/**
 * Limits and backpressure on a real gateway over real sockets: message size (1009), the
 * connection cap (503 before the upgrade), in-flight requests per connection (Ask -32013, Tau
 * busy), slow consumers (1013) while other clients carry on, and ping keepalive.
 */

const cleanups = cleanupsAfterEach();

const gateway = (options: OperatedGatewayOptions = {}) => cleanups.stopAfterTest(startOperatedGateway(options));

/** A raw socket that records its close, for clients that misbehave on purpose. */
function rawSocket(url: string, options: WebSocket.ClientOptions = {}) {
  const socket = new WebSocket(url, options);
  socket.on("error", () => undefined);
  const opened = new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  cleanups.push(() => socket.terminate());
  return { socket, opened, closed };
}

/** An upgrade the gateway must refuse: resolves with the HTTP status and body it answered instead. */
function refusedUpgrade(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    cleanups.push(() => socket.terminate());
    socket.on("open", () => reject(new Error(`the upgrade to ${url} was accepted`)));
    socket.on("error", () => undefined);
    socket.on("unexpected-response", (_request, response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
  });
}

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "gateway-limits-")));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe("message size", () => {
  const maxMessageBytes = 64 * 1024;

  it("closes an Ask connection with 1009 and the limit when a message is too big; smaller ones are answered", async () => {
    const gw = await gateway({ maxMessageBytes });
    const client = await gw.askClient();
    // Just under the limit: an ordinary (invalid) message, answered, connection kept.
    client.socket.send(`"${"x".repeat(maxMessageBytes - 100)}"`);
    await client.waitFor(() => client.received.some((m: any) => m.error?.code === -32600), "the invalid-request answer");
    expect(await client.request("ping")).toMatchObject({ status: "ok" });

    const closed = new Promise<{ code: number; reason: string }>((resolve) => client.socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })));
    client.socket.send(JSON.stringify({ jsonrpc: "2.0", id: 99, method: "ping", params: { padding: "x".repeat(maxMessageBytes) } }));
    const { code, reason } = await closed;
    expect(code).toBe(1009);
    expect(reason).toContain(`at most ${maxMessageBytes} bytes`);
    await waitUntil(async () => sampleValue(await gw.scrape(), "tau_gateway_oversized_messages_total", { route: "/rpc" }) === 1, "the oversized message counted");
  });

  it("closes a /tau connection with 1009 and the limit", async () => {
    const gw = await gateway({ maxMessageBytes });
    const client = await gw.tauClient();
    const parseError = errorOf(await new Promise<any>((resolve) => {
      const stop = client.onMessage((m) => {
        stop();
        resolve(m);
      });
      client.sendRaw("x".repeat(maxMessageBytes - 100));
    }));
    expect(parseError.code).toBe("parse_error");

    client.send("session.list", { padding: "x".repeat(maxMessageBytes) });
    const { code, reason } = await client.closed();
    expect(code).toBe(1009);
    expect(reason).toContain(`at most ${maxMessageBytes} bytes`);
  });
});

describe("connection cap", () => {
  it("refuses upgrades past --max-connections with HTTP 503 and takes new ones once a connection closes", async () => {
    const gw = await gateway({ limits: { maxConnections: 2 } });
    const ask = await gw.askClient();
    await gw.tauClient();

    const refused = await refusedUpgrade(gw.rpcUrl);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({ error: "too_many_connections", message: expect.stringContaining("limit of 2 open connections") });
    expect((await refusedUpgrade(gw.tauUrl)).status).toBe(503);
    // Plain HTTP is not a long-lived connection: never capped.
    expect((await fetch(`${gw.httpUrl}/healthz`)).status).toBe(200);

    ask.socket.close();
    await waitUntil(async () => {
      const probe = rawSocket(gw.rpcUrl);
      return probe.opened.then(
        () => true,
        () => false,
      );
    }, "a connection accepted after one closed");
    expect(sampleValue(await gw.scrape(), "tau_gateway_connections_refused_total", { reason: "max_connections" })).toBeGreaterThanOrEqual(2);
  });
});

describe("in-flight requests per connection", () => {
  it("answers the Ask request past --max-inflight with -32013 and frees the slots as requests complete", async () => {
    const gw = await gateway({ limits: { maxInflight: 2 } });
    const client = await gw.askClient();
    // One batch: all three start before any can finish (each waits for the Tau host).
    client.socket.send(JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: "2.0", id: `list-${id}`, method: "session/list", params: {} }))));
    await client.waitFor(() => client.received.filter((m: any) => typeof m.id === "string" && m.id.startsWith("list-")).length === 3, "three answers");
    const answers = client.received.filter((m: any) => typeof m.id === "string" && m.id.startsWith("list-")) as any[];
    const overloaded = answers.filter((a) => a.error);
    expect(overloaded).toHaveLength(1);
    expect(overloaded[0].error).toMatchObject({ code: -32013, message: expect.stringMatching(/overloaded.*in flight.*limit is 2/) });
    expect(answers.filter((a) => a.result)).toHaveLength(2);

    // The slots are free again.
    expect(await client.request("session/list", {})).toMatchObject({ sessions: expect.any(Array) });
    expect(await client.request("session/list", {})).toMatchObject({ sessions: expect.any(Array) });
    const samples = await gw.scrape();
    expect(sampleValue(samples, "tau_gateway_requests_total", { dialect: "ask", method: "session/list", outcome: "overloaded" })).toBe(1);
    expect(sampleValue(samples, "tau_gateway_requests_total", { dialect: "ask", method: "session/list", outcome: "ok" })).toBe(4);
  });

  it("answers the /tau request past --max-inflight with busy, never refuses cancelling, and frees slots on responses", async () => {
    const gw = await gateway({ limits: { maxInflight: 2 } });
    const dir = tempDir();
    const client = await gw.tauClient();
    const sessionId = await client.createSession(dir);
    // Each exec runs until the test creates the release file: they stay open as long as needed.
    const waitForRelease = `while [ ! -e '${join(dir, "release")}' ]; do sleep 0.05; done; echo released`;
    const exec = (execId: string) => client.send("session.exec", { sessionId, execId, command: waitForRelease });

    const first = exec("e1");
    const second = exec("e2");
    const refused = errorOf(await exec("e3").response);
    expect(refused.code).toBe("busy");
    expect(refused.message).toMatch(/gateway's in-flight limit was reached.*limit 2/);

    // Cancelling settles work already running, so it is never refused (with two requests open).
    expect(resultOf(await client.request("session.cancelExec", { sessionId, execId: "e1" }))).toEqual({ cancelled: true });
    const cancelled = await first.response;
    expect(cancelled.ok ? cancelled.result.aborted : cancelled.error.code === "cancelled").toBe(true);

    writeFileSync(join(dir, "release"), "");
    expect(resultOf(await second.response)).toMatchObject({ exitCode: 0, output: expect.stringContaining("released") });
    expect(resultOf(await exec("e4").response)).toMatchObject({ exitCode: 0 });

    const samples = await gw.scrape();
    expect(sampleValue(samples, "tau_gateway_requests_total", { dialect: "tau", method: "session.exec", outcome: "busy" })).toBe(1);
  });
});

describe("slow consumers", () => {
  it("disconnects clients that stop reading (1013, on /rpc and /tau) while a reading client gets every event", async () => {
    const maxBufferedBytes = 256 * 1024;
    const gw = await gateway({ limits: { maxBufferedBytes } });
    const reader = await gw.askClient();
    const { session } = await reader.request("session/create", {});
    const sessionId: string = session.sessionId;
    await reader.request("session/subscribe", { sessionId });

    const slowAsk = await gw.askClient();
    await slowAsk.request("session/subscribe", { sessionId });
    const slowTau = await gw.tauClient();
    resultOf(await slowTau.request("session.observe", { sessionId }));
    const askClosed = new Promise<{ code: number; reason: string }>((resolve) => slowAsk.socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })));
    const tauClosed = slowTau.closed();
    // Stop reading: the bytes sent to them pile up in the kernel buffers, then in the gateway.
    const transport = (socket: WebSocket) => (socket as unknown as { _socket: import("node:net").Socket })._socket;
    transport(slowAsk.socket).pause();
    transport(slowTau.socket).pause();

    // Turns with megabytes of tool output, until both slow clients were dropped (how many depends on kernel buffer sizes).
    const bigOutputs = Array(4).fill("/bash head -c 1000000 /dev/zero | tr '\\0' a").join("\n");
    const dropped = async () => {
      const samples = await gw.scrape();
      return ["/rpc", "/tau"].map((route) => sampleValue(samples, "tau_gateway_slow_consumers_dropped_total", { route }));
    };
    for (let turn = 0; turn < 12 && (await dropped()).includes(0); turn++) {
      const seen = reader.eventsOf(sessionId).length;
      await reader.request("session/send", { sessionId, content: bigOutputs });
      await reader.waitFor(() => reader.eventsOf(sessionId).slice(seen).some((e) => e.type === "turn.completed"), "the turn to complete", 60_000);
    }
    expect(await dropped()).toEqual([1, 1]);

    transport(slowAsk.socket).resume();
    transport(slowTau.socket).resume();
    const reason = `client too slow: more than ${maxBufferedBytes} bytes were waiting to be read`;
    expect(await askClosed).toEqual({ code: 1013, reason });
    expect(await tauClosed).toEqual({ code: 1013, reason });

    // The reader kept up: every event, in order, and the gateway still serves it.
    await reader.request("session/send", { sessionId, content: "still here" });
    await reader.waitFor(() => reader.eventsOf(sessionId).filter((e) => e.type === "turn.completed").length >= 2 && reader.eventsOf(sessionId).at(-1)!.type === "turn.completed", "the last turn");
    expectContiguous(reader.eventsOf(sessionId));
    expect(reader.invalid).toEqual([]);
  }, 120_000);
});

describe("keepalive", () => {
  it("terminates peers that do not answer pings, on /rpc and /tau, and keeps those that do", async () => {
    const gw = await gateway({ limits: { keepaliveMs: 500 } });
    const live = await gw.askClient();
    const deadAsk = rawSocket(gw.rpcUrl, { autoPong: false });
    const deadTau = rawSocket(gw.tauUrl, { autoPong: false });
    await Promise.all([deadAsk.opened, deadTau.opened]);

    // Terminated, not closed: a dead peer would never answer a close frame either.
    expect((await deadAsk.closed).code).toBe(1006);
    expect((await deadTau.closed).code).toBe(1006);
    expect(live.socket.readyState).toBe(WebSocket.OPEN);
    expect(await live.request("ping")).toMatchObject({ status: "ok" });

    const samples = await gw.scrape();
    expect(sampleValue(samples, "tau_gateway_keepalive_timeouts_total", { route: "/rpc" })).toBe(1);
    expect(sampleValue(samples, "tau_gateway_keepalive_timeouts_total", { route: "/tau" })).toBe(1);
  });
});

describe("limit settings", () => {
  it("lists every limit with its default and variable in serve --help", async () => {
    const { code, stdout } = await runCommand(["serve", "--help"]);
    expect(code).toBe(0);
    for (const [flag, variable] of [
      ["--max-message-bytes", "TAU_GATEWAY_MAX_MESSAGE_BYTES"],
      ["--max-connections", "TAU_GATEWAY_MAX_CONNECTIONS"],
      ["--max-inflight", "TAU_GATEWAY_MAX_INFLIGHT"],
      ["--max-buffered-bytes", "TAU_GATEWAY_MAX_BUFFERED_BYTES"],
      ["--keepalive-ms", "TAU_GATEWAY_KEEPALIVE_MS"],
    ]) {
      expect(stdout).toContain(flag);
      expect(stdout).toContain(variable);
    }
    expect(stdout).toContain("(default 33554432)");
    expect(stdout).toContain("(default 20000)");
  });

  it("refuses bad values at start, naming the setting and the value (exit 2)", async () => {
    const flag = await runCommand(["serve", "--max-inflight", "0"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('invalid --max-inflight "0": must be an integer from 1');
    const variable = await runCommand(["serve"], { env: { TAU_GATEWAY_KEEPALIVE_MS: "soon" } });
    expect(variable.code).toBe(2);
    expect(variable.stderr).toContain('invalid TAU_GATEWAY_KEEPALIVE_MS "soon"');
  });
});
