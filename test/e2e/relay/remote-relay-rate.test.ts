import { describe, expect, it } from "vitest";
import { CODEX_RELAY } from "../../../src/cli/dialects/codex/relay.js";
import { GatewayRelay } from "../../../src/relay/gateway-relay.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startTestGateway } from "../../support/gateway.js";

/**
 * Issue 40, finding 6: `app-server --remote` answered about 38 requests/s, because the pause the
 * relay keeps after a response (so that what a request caused is read apart from its answer, as
 * on the local app-server's pipe) held the next response too: each request waited out the pause
 * of the one before. Here the relay, on a real gateway, keeps a pause of an hour: pipelined
 * requests are all answered only if no response ever waits for it (the bounded-work check: with
 * the old spacing the second answer would take an hour), while a message a request caused does.
 */

const cleanups = cleanupsAfterEach();
const AN_HOUR_MS = 3_600_000;
const REQUESTS = 500;

describe("the Codex relay's rate", () => {
  it("answers pipelined requests without waiting out the pause after each response", async () => {
    const gw = await cleanups.stopAfterTest(startTestGateway());
    const relay = await GatewayRelay.open({ dialect: { ...CODEX_RELAY, pauseAfterResponseMs: AN_HOUR_MS }, url: gw.codexUrl, log: () => undefined, holdMs: 30_000 });
    cleanups.push(() => relay.close());
    const lines: Array<Record<string, unknown>> = [];
    let waiting: { until: () => boolean; resolve: () => void } | undefined;
    const connection = relay.connection((line) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
      if (waiting?.until()) waiting.resolve();
    });
    const seen = (until: () => boolean) => new Promise<void>((resolve) => (until() ? resolve() : (waiting = { until, resolve })));
    const answered = (id: unknown) => lines.some((m) => m.id === id && !("method" in m));

    await connection.receive(JSON.stringify({ id: "init", method: "initialize", params: { clientInfo: { name: "relay-rate", version: "1" } } }));
    await seen(() => answered("init"));
    await connection.receive(JSON.stringify({ method: "initialized" }));
    // A thread: its thread/started is a message the request caused, held for the pause.
    await connection.receive(JSON.stringify({ id: "start", method: "thread/start", params: { cwd: gw.cwd } }));
    await seen(() => answered("start"));

    for (let i = 0; i < REQUESTS; i++) void connection.receive(JSON.stringify({ id: i, method: "thread/loaded/list", params: {} }));
    await seen(() => Array.from({ length: REQUESTS }, (_, i) => i).every(answered));
    expect(lines.filter((m) => typeof m.id === "number" && !("method" in m))).toHaveLength(REQUESTS);
    // What thread/start caused still waits for the pause after its answer: responses passed it.
    expect(lines.some((m) => m.method === "thread/started")).toBe(false);
    // Stopping writes what waits: it was there, held.
    await relay.close();
    expect(lines.at(-1)).toMatchObject({ method: "thread/started" });
  }, 120_000);
});
