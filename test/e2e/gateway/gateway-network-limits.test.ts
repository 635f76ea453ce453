import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { runCommand } from "../../support/cli.js";
import { startOperatedGateway, type OperatedGatewayOptions } from "../../support/operated-gateway.js";
import { sampleValue } from "../../support/prometheus.js";

/**
 * Network deadlines and the per-address cap on a real gateway over real TCP: a connection that
 * never speaks, headers that never finish (a WebSocket upgrade among them), a body that never
 * finishes, a WebSocket peer that vanished, and too many connections from one address — each is
 * closed, counted in /metrics, and leaves clients that behave untouched.
 */

const cleanups = cleanupsAfterEach();
const gateway = (options: OperatedGatewayOptions = {}) => cleanups.stopAfterTest(startOperatedGateway(options));

/** A raw TCP connection to the gateway: what it was sent back, and its close. */
function tcp(httpUrl: string): { socket: Socket; opened: Promise<void>; received: () => string; closed: Promise<void> } {
  const { hostname, port } = new URL(httpUrl);
  const socket = connect({ host: hostname, port: Number(port) });
  let text = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => (text += chunk));
  socket.on("error", () => undefined);
  cleanups.push(() => socket.destroy());
  const opened = new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return { socket, opened, received: () => text, closed };
}

describe("network deadlines", () => {
  it("closes a connection that never sends anything after the idle timeout, and counts it", async () => {
    const gw = await gateway({ limits: { idleTimeoutMs: 200 } });
    const silent = tcp(gw.httpUrl);
    await silent.opened;
    await silent.closed;
    expect(silent.received()).toBe("");
    expect(sampleValue(await gw.scrape(), "tau_gateway_network_timeouts_total", { route: "http", stage: "idle" })).toBe(1);
  });

  it("closes a silent connection at the idle deadline, not at the later headers or request deadline", async () => {
    const gw = await gateway({ limits: { idleTimeoutMs: 1000, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 } });
    const silent = tcp(gw.httpUrl);
    await silent.opened;
    await silent.closed;
    // No 408: the headers deadline did not do it, the idle one did.
    expect(silent.received()).toBe("");
    const samples = await gw.scrape();
    expect(sampleValue(samples, "tau_gateway_network_timeouts_total", { route: "http", stage: "idle" })).toBe(1);
    expect(sampleValue(samples, "tau_gateway_network_timeouts_total", { stage: "headers" })).toBe(0);
  });

  it("closes a kept-alive connection once it has been idle for the idle deadline, and advertises that deadline", async () => {
    // Fastify's keepAliveTimeout (72 s, plus Node's 1 s buffer) used to win over the idle deadline.
    const gw = await gateway({ limits: { idleTimeoutMs: 1000, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 } });
    const kept = tcp(gw.httpUrl);
    await kept.opened;
    kept.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n");
    await kept.closed;
    expect(kept.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(kept.received().toLowerCase()).toContain("keep-alive: timeout=1");
    expect(sampleValue(await gw.scrape(), "tau_gateway_network_timeouts_total", { route: "http", stage: "idle" })).toBe(1);
  });

  it("does not let connections that never speak hold a per-address slot", async () => {
    const gw = await gateway({ limits: { idleTimeoutMs: 1000, maxConnectionsPerAddress: 2 } });
    const silent = [tcp(gw.httpUrl), tcp(gw.httpUrl)];
    await Promise.all(silent.map((c) => c.closed));
    // Both slots are free again: a client that speaks is served.
    const response = await fetch(`${gw.httpUrl}/healthz`, { headers: { connection: "close" } });
    expect(response.status).toBe(200);
    expect(sampleValue(await gw.scrape(), "tau_gateway_network_timeouts_total", { route: "http", stage: "idle" })).toBe(2);
  });

  it("answers 408 and closes when a request's headers never finish, a WebSocket upgrade's too", async () => {
    const gw = await gateway({ limits: { headersTimeoutMs: 300, requestTimeoutMs: 10_000, idleTimeoutMs: 60_000 } });
    const slowGet = tcp(gw.httpUrl);
    const slowUpgrade = tcp(gw.httpUrl);
    await Promise.all([slowGet.opened, slowUpgrade.opened]);
    slowGet.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    slowUpgrade.socket.write("GET /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n");
    await Promise.all([slowGet.closed, slowUpgrade.closed]);
    expect(slowGet.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(slowUpgrade.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(sampleValue(await gw.scrape(), "tau_gateway_network_timeouts_total", { route: "http", stage: "headers" })).toBe(2);
  });

  it("answers 408 and closes when a request body never finishes", async () => {
    const gw = await gateway({ limits: { headersTimeoutMs: 300, requestTimeoutMs: 400, idleTimeoutMs: 60_000 } });
    const slowBody = tcp(gw.httpUrl);
    await slowBody.opened;
    slowBody.socket.write("POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":");
    await slowBody.closed;
    expect(slowBody.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(sampleValue(await gw.scrape(), "tau_gateway_network_timeouts_total", { route: "http", stage: "request" })).toBe(1);
  });

  it("terminates a WebSocket whose peer vanished after the upgrade (it reads and answers nothing)", async () => {
    const gw = await gateway({ limits: { keepaliveMs: 200 } });
    const vanished = tcp(gw.httpUrl);
    await vanished.opened;
    vanished.socket.write("GET /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n");
    await vanished.closed;
    expect(vanished.received()).toMatch(/^HTTP\/1\.1 101 /);
    expect(sampleValue(await gw.scrape(), "tau_gateway_keepalive_timeouts_total", { route: "/rpc" })).toBe(1);
  });

  it("leaves alone connections that are working: an open WebSocket, a keep-alive connection between requests", async () => {
    const gw = await gateway({ limits: { idleTimeoutMs: 150, keepaliveMs: 100 } });
    const client = await gw.askClient();
    // Outlive the idle timeout several times over, counted in the gateway's own pings.
    let pings = 0;
    await new Promise<void>((resolve) => client.socket.on("ping", () => ++pings === 5 && resolve()));
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
    expect(await client.request("ping")).toMatchObject({ status: "ok" });
    // A keep-alive HTTP connection is closed once idle, after its answer, never before it.
    const response = await fetch(`${gw.httpUrl}/healthz`);
    expect(response.status).toBe(200);
  });
});

describe("connections per client address", () => {
  it("closes a connection past the cap at once, counts it, and takes one again when a slot is free", async () => {
    const gw = await gateway({ limits: { maxConnectionsPerAddress: 3, idleTimeoutMs: 60_000 } });
    const held = [tcp(gw.httpUrl), tcp(gw.httpUrl), tcp(gw.httpUrl)];
    await Promise.all(held.map((c) => c.opened));
    // The gateway has seen the three before the fourth: an answered request on one of them proves it.
    held[0]!.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await new Promise<void>((resolve) => held[0]!.socket.once("data", () => resolve()));
    const refused = tcp(gw.httpUrl);
    await refused.closed;
    expect(refused.received()).toBe("");

    held[1]!.socket.destroy();
    await held[1]!.closed;
    // The slot is given back when the gateway sees the close: retry until it has.
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      status = await fetch(`${gw.httpUrl}/healthz`, { headers: { connection: "close" } }).then(
        (r) => r.status,
        () => 0,
      );
    }
    expect(status).toBe(200);
    for (const connection of held) connection.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    expect(sampleValue(await gw.scrape(), "tau_gateway_connections_refused_total", { reason: "max_connections_per_address" })).toBeGreaterThanOrEqual(1);
  });

  it("does not cap peers trusted as proxies: every client behind them shares their address", async () => {
    const gw = await gateway({ limits: { maxConnectionsPerAddress: 2, idleTimeoutMs: 60_000 }, trustProxy: ["127.0.0.1"] });
    const held = [tcp(gw.httpUrl), tcp(gw.httpUrl), tcp(gw.httpUrl)];
    await Promise.all(held.map((c) => c.opened));
    const response = await fetch(`${gw.httpUrl}/healthz`);
    expect(response.status).toBe(200);
    expect(sampleValue(await gw.scrape(), "tau_gateway_connections_refused_total", { reason: "max_connections_per_address" })).toBe(0);
  });
});

describe("network limit settings", () => {
  it("lists each deadline and the per-address cap with its default and variable in serve --help, and refuses bad values", async () => {
    const { code, stdout } = await runCommand(["serve", "--help"]);
    expect(code).toBe(0);
    for (const [flag, variable, fallback] of [
      ["--idle-timeout-ms", "TAU_GATEWAY_IDLE_TIMEOUT_MS", "(default 30000)"],
      ["--headers-timeout-ms", "TAU_GATEWAY_HEADERS_TIMEOUT_MS", "(default 10000)"],
      ["--request-timeout-ms", "TAU_GATEWAY_REQUEST_TIMEOUT_MS", "(default 30000)"],
      ["--max-connections-per-address", "TAU_GATEWAY_MAX_CONNECTIONS_PER_ADDRESS", "(default 256)"],
    ]) {
      expect(stdout).toContain(flag);
      expect(stdout).toContain(variable);
      expect(stdout).toContain(fallback);
    }
    const bad = await runCommand(["serve"], { env: { TAU_GATEWAY_HEADERS_TIMEOUT_MS: "-1" } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid TAU_GATEWAY_HEADERS_TIMEOUT_MS "-1"');
  });
});
