import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { serveCli, type ServingCli } from "../../support/cli.js";
import { startStallingCollector } from "../../support/stalling-collector.js";

/**
 * A collector that is down or never answers in full (a real loopback TCP server) neither holds
 * sockets nor delays a stop: each export has a hard deadline after which its socket is destroyed,
 * and the last spans get a fixed share of the drain budget (a quarter) before they are given up.
 * A stop that waited on the collector would never end here: the test waits for the process's exit.
 */

const cleanups = cleanupsAfterEach();

const ping = (gateway: ServingCli, id: number) =>
  fetch(`${gateway.baseUrl}/rpc`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }) }).then((r) => r.json());

const tracingTo = (url: string, timeoutMs: number) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: url,
  OTEL_EXPORTER_OTLP_TIMEOUT: String(timeoutMs),
  // Export each batch soon, so exports happen while the test runs.
  OTEL_BSP_SCHEDULE_DELAY: "20",
});

describe("tracing to a collector that never answers", () => {
  it("a collector answering byte by byte: one socket at a time, each destroyed at its deadline; SIGTERM exits, giving the last spans up", async () => {
    const collector = await startStallingCollector("drip");
    cleanups.push(() => collector.close());
    const gateway = await serveCli(["--port", "0", "--log-level", "warn", "--drain-timeout", "2000"], cleanups, tracingTo(collector.url, 300));
    // Several exports in turn, each of them met by a collector that never finishes its answer.
    for (let round = 1; round <= 4; round++) {
      await ping(gateway, round);
      await collector.accepts(round);
    }
    // Without deadlines every export kept its socket open (and the stop never ended).
    expect(collector.mostOpen).toBeLessThanOrEqual(2);
    expect(gateway.stderr()).toContain("exporting spans failed; their batch is dropped");
    expect(gateway.stderr().split("exporting spans failed").length - 1).toBe(1);

    await ping(gateway, 99);
    gateway.child.kill("SIGTERM");
    expect(await gateway.exit).toEqual({ code: 0, signal: null });
    await collector.allClosed();
  }, 60_000);

  it("a collector that reads and never answers: the last spans are given up within the stop's share and the process exits", async () => {
    const collector = await startStallingCollector("silent");
    cleanups.push(() => collector.close());
    // The export deadline (60 s) is far past the stop's share of the drain budget (a quarter of 2 s): only that share can end the stop.
    const gateway = await serveCli(["--port", "0", "--log-level", "warn", "--drain-timeout", "2000"], cleanups, { ...tracingTo(collector.url, 60_000), OTEL_BSP_SCHEDULE_DELAY: "600000" });
    await ping(gateway, 1);
    gateway.child.kill("SIGTERM");
    expect(await gateway.exit).toEqual({ code: 0, signal: null });
    expect(gateway.stderr()).toContain('"msg":"tracing: gave up exporting the last spans"');
    expect(gateway.stderr()).toContain('"budgetMs":500');
    await collector.allClosed();
  }, 60_000);

  it("a collector that is down: the failed export is logged once and the stop does not wait on retries", async () => {
    const collector = await startStallingCollector("silent");
    const url = collector.url;
    await collector.close();
    const gateway = await serveCli(["--port", "0", "--log-level", "warn"], cleanups, tracingTo(url, 10_000));
    await ping(gateway, 1);
    await ping(gateway, 2);
    gateway.child.kill("SIGTERM");
    expect(await gateway.exit).toEqual({ code: 0, signal: null });
    expect(gateway.stderr().split("exporting spans failed").length - 1).toBe(1);
  }, 60_000);
});
