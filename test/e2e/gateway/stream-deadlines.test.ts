import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AskTestClient } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startOperatedGateway, waitUntil, type OperatedGateway, type OperatedGatewayOptions } from "../../support/operated-gateway.js";
import { sampleValue } from "../../support/prometheus.js";

/**
 * The deadlines of connections that outlive a request, on a real gateway over real sockets: an
 * event stream (`GET /rpc/events`) whose reader stopped reading, a Unix-socket client that never
 * says a line, and one that stopped reading — each is closed at the idle deadline and counted in
 * `tau_gateway_network_timeouts_total`, while clients that behave are left alone.
 */

const cleanups = cleanupsAfterEach();
const IDLE_MS = 1000;
// Far above what the turns below send, so that only the stall deadline can close a reader.
const HUGE_BUFFER = 512 * 1024 * 1024;

function socketPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "stream-deadlines-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, "ask.sock");
}

async function gateway(options: OperatedGatewayOptions = {}): Promise<OperatedGateway> {
  return cleanups.stopAfterTest(startOperatedGateway({ ...options, limits: { idleTimeoutMs: IDLE_MS, maxBufferedBytes: HUGE_BUFFER, ...options.limits } }));
}

/** A raw connection (TCP or Unix socket): what it received, and its close. */
function raw(socket: Socket): { socket: Socket; received: () => string; firstData: Promise<void>; closed: Promise<void> } {
  let text = "";
  socket.setEncoding("utf8");
  socket.on("error", () => undefined);
  cleanups.push(() => socket.destroy());
  const firstData = new Promise<void>((resolve) => socket.once("data", () => resolve()));
  socket.on("data", (chunk: string) => (text += chunk));
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return { socket, received: () => text, firstData, closed };
}

const timeouts = async (gw: OperatedGateway, route: string, stage: string) => sampleValue(await gw.scrape(), "tau_gateway_network_timeouts_total", { route, stage });

/** Turns of megabytes of tool output in the session, until `done` (how many it takes depends on the kernel's socket buffers). */
async function floodUntil(client: AskTestClient, sessionId: string, done: () => Promise<boolean>): Promise<void> {
  const big = Array(4).fill("/bash head -c 1000000 /dev/zero | tr '\\0' a").join("\n");
  for (let turn = 0; turn < 12 && !(await done()); turn++) {
    const seen = client.eventsOf(sessionId).length;
    await client.request("session/send", { sessionId, content: big });
    await client.waitFor(() => client.eventsOf(sessionId).slice(seen).some((e) => e.type === "turn.completed"), "the turn to complete", 60_000);
  }
  // Once backed up, the stream is cut a deadline later whether or not more is sent.
  await waitUntil(done, "the stalled reader to be disconnected");
}

describe("event streams", () => {
  it("closes a /rpc/events stream whose reader stopped reading at the idle deadline, counts it, and keeps serving a reader that reads", async () => {
    const gw = await gateway();
    const reader = await gw.askClient();
    const { session } = await reader.request("session/create", {});
    const sessionId: string = session.sessionId;
    await reader.request("session/subscribe", { sessionId });

    const { hostname, port } = new URL(gw.httpUrl);
    const stalled = raw(connect({ host: hostname, port: Number(port) }));
    stalled.socket.write(`GET /rpc/events?sessionId=${sessionId} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
    await stalled.firstData;
    expect(stalled.received()).toMatch(/^HTTP\/1\.1 200 /);
    // The reader stops reading: what the gateway sends piles up in the kernel's buffers, then in the stream.
    stalled.socket.pause();

    await floodUntil(reader, sessionId, async () => (await timeouts(gw, "/rpc/events", "stalled")) === 1);
    stalled.socket.resume();
    await stalled.closed;
    // Nothing else cut it: not the byte bound of slow consumers, not the idle deadline of connections without a response.
    const samples = await gw.scrape();
    expect(sampleValue(samples, "tau_gateway_slow_consumers_dropped_total", { route: "/rpc/events" })).toBe(0);
    expect(sampleValue(samples, "tau_gateway_network_timeouts_total", { route: "http", stage: "idle" })).toBe(0);

    // The reader that kept up still gets its session's events.
    await reader.request("session/send", { sessionId, content: "still here" });
    await reader.waitFor(() => reader.eventsOf(sessionId).at(-1)?.type === "turn.completed" && JSON.stringify(reader.eventsOf(sessionId).at(-1)).includes("still here"), "the last turn");
  }, 120_000);
});

describe("Unix-socket clients", () => {
  it("disconnects a client that never sends a line at the idle deadline, and leaves one that spoke", async () => {
    const path = socketPath();
    const gw = await gateway({ socketPath: path });
    const talker = await AskTestClient.unixSocket(path);
    cleanups.push(() => talker.socket.destroy());
    expect(await talker.request("ping")).toMatchObject({ status: "ok" });

    // Connected after the talker: were the talker subject to the deadline, it would have gone first.
    const silent = raw(connect(path));
    await silent.closed;
    expect(silent.received()).toBe("");
    expect(await timeouts(gw, "socket", "idle")).toBe(1);
    expect(talker.socket.destroyed).toBe(false);
    expect(await talker.request("ping")).toMatchObject({ status: "ok" });
  });

  it("disconnects a client that stopped reading at the idle deadline, and counts it", async () => {
    const path = socketPath();
    const gw = await gateway({ socketPath: path });
    const reader = await gw.askClient();
    const { session } = await reader.request("session/create", {});
    const sessionId: string = session.sessionId;
    await reader.request("session/subscribe", { sessionId });

    // A raw client: the gateway cuts it off mid-line, which a line reader would choke on.
    const stalled = raw(connect(path));
    stalled.socket.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/subscribe", params: { sessionId } })}\n`);
    await stalled.firstData;
    expect(stalled.received()).toContain('"subscription"');
    stalled.socket.pause();

    await floodUntil(reader, sessionId, async () => (await timeouts(gw, "socket", "stalled")) === 1);
    stalled.socket.resume();
    await stalled.closed;
    expect(sampleValue(await gw.scrape(), "tau_gateway_slow_consumers_dropped_total", { route: "socket" })).toBe(0);
  }, 120_000);
});
