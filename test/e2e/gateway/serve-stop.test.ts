import { describe, expect, it } from "vitest";
import { DEFAULT_DRAIN_TIMEOUT_MS, MIN_CLOSE_HANDSHAKE_MS } from "../../../src/gateway/drain.js";
import { AskTestClient } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { serveCli, type ServingCli } from "../../support/cli.js";
import { openStalledWebSocket } from "../../support/stalled-websocket.js";

/**
 * `tau-gateway serve` stopping inside a platform's grace period: `docker stop` sends SIGTERM and
 * SIGKILLs after 10 s, Kubernetes after terminationGracePeriodSeconds (30 s). A client that never
 * answers the WebSocket close frame must not hold the process (`ws` alone waits 30 s for it), and
 * the default drain leaves room for closing inside Docker's 10 s.
 */

const cleanups = cleanupsAfterEach();
const serve = (args: string[]) => serveCli(args, cleanups);

/** Docker's default stop timeout, before it sends SIGKILL. */
const DOCKER_STOP_TIMEOUT_MS = 10_000;
/** `ws`'s own wait for a client's answering close frame: an exit that had waited for it comes after this. */
const WS_CLOSE_TIMEOUT_MS = 30_000;

/** The process's exit, or a failure if it is still running after `withinMs` (set well below the 30 s `ws` would wait). */
function exitWithin(served: ServingCli, withinMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return Promise.race([
    served.exit,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running ${withinMs} ms after SIGTERM; stderr:\n${served.stderr()}`)), withinMs).unref()),
  ]);
}

describe("tau-gateway serve stopping with a client that never answers the close frame", () => {
  it("cuts the silent clients off once the drain's time is used and exits 0; clients that answer still get 1001", { timeout: 60_000 }, async () => {
    const served = await serve(["--port", "0", "--drain-timeout", "1000"]);
    const ws = served.baseUrl.replace("http://", "ws://");
    const silentAsk = await openStalledWebSocket(`${ws}/rpc`);
    const silentCodex = await openStalledWebSocket(`${ws}/`);
    const silentTau = await openStalledWebSocket(`${ws}/tau`);
    for (const silent of [silentAsk, silentCodex, silentTau]) cleanups.push(() => silent.socket.destroy());
    const client = await AskTestClient.websocket(`${ws}/rpc`);
    cleanups.push(() => client.socket.terminate());
    const closed = new Promise<number>((resolve) => client.socket.once("close", (code) => resolve(code)));
    await client.request("ping");

    served.child.kill("SIGTERM");
    expect(await closed).toBe(1001);
    // Half of what `ws` would have waited for the silent ones alone: room for a loaded machine.
    expect(await exitWithin(served, WS_CLOSE_TIMEOUT_MS / 2)).toEqual({ code: 0, signal: null });
    // Their connections were ended by the gateway, not left open.
    await Promise.all([silentAsk.ended(), silentCodex.ended(), silentTau.ended()]);
  });

  it("by default drains for less than Docker's stop timeout: a turn that never ends and a silent client still end in exit 0", { timeout: 60_000 }, async () => {
    // What is left for closing sockets and the host after the drain's deadline, inside `docker stop`'s 10 s.
    expect(DEFAULT_DRAIN_TIMEOUT_MS + MIN_CLOSE_HANDSHAKE_MS).toBeLessThanOrEqual(DOCKER_STOP_TIMEOUT_MS - 1_000);
    const served = await serve(["--port", "0"]);
    const ws = served.baseUrl.replace("http://", "ws://");
    const silent = await openStalledWebSocket(`${ws}/rpc`);
    cleanups.push(() => silent.socket.destroy());
    const client = await AskTestClient.websocket(`${ws}/rpc`);
    cleanups.push(() => client.socket.terminate());
    const sessionId = (await client.request("session/create", {})).session.sessionId as string;
    await client.request("session/subscribe", { sessionId });
    await client.request("session/send", { sessionId, content: "/sleep 120000\nnever gets here" });
    await client.waitForEvent(sessionId, "turn.started");

    served.child.kill("SIGTERM");
    expect(await exitWithin(served, WS_CLOSE_TIMEOUT_MS - 5_000)).toEqual({ code: 0, signal: null });
    expect(served.stderr()).toContain(`"drainTimeoutMs":${DEFAULT_DRAIN_TIMEOUT_MS}`);
    expect(served.stderr()).toMatch(/"drained":false/);
    await silent.ended();
  });
});
