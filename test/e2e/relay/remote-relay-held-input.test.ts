import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { AskTestClient } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { freePort } from "../../support/free-port.js";
import { spawnLineChild } from "../../support/line-child.js";
import { readyServe } from "../../support/relayed-clients.js";
import { until } from "../../support/replica-set.js";

/**
 * A `--remote` relay whose gateway is away holds what its client writes for the next connection,
 * but only up to its bound (8 MiB): past it, it takes no more off stdin, so the rest waits in the
 * client's pipe instead of in the relay's memory. Once the gateway is back, everything is passed on
 * and answered, nothing lost. Measured by the bytes the relay took off its stdin.
 */

const cleanups = cleanupsAfterEach();
const MiB = 1024 * 1024;

/** Bytes a process has read with read(2) and its kin so far (`rchar` of /proc/PID/io). */
const bytesRead = (pid: number): number => Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))![1]);

describe("a relay's stdin while the gateway is away", () => {
  it(
    "is read only up to the bound of held input; the rest is read, passed on and answered once the gateway is back",
    async () => {
      const port = await freePort();
      const serve = () => readyServe(["--port", String(port), "--log-level", "warn"], cleanups);
      let gateway = await serve();
      let terminal!: AskTestClient;
      // A query value in the URL (any name) is never written to the log.
      const relay = spawnLineChild(["stdio", "--remote", `ws://127.0.0.1:${port}/?tenant-hint=query-secret-5`, "--log-level", "info"], cleanups, (line) => terminal.receive(line));
      terminal = new AskTestClient(relay.write);
      await terminal.request("initialize", { client: { name: "ask-terminal", version: "1" } });

      gateway.child.kill("SIGKILL");
      await gateway.exit;
      await until(() => relay.stderr().includes("the connection to the gateway was lost") || undefined, "the relay to see the gateway gone");

      // 64 requests of 1 MiB each: far more than the relay may hold.
      const before = bytesRead(relay.child.pid!);
      const lines = 64;
      const pad = "x".repeat(MiB);
      let written = 0;
      for (let i = 0; i < lines; i++) {
        const line = `${JSON.stringify({ jsonrpc: "2.0", id: 1000 + i, method: "ping", params: { pad } })}\n`;
        written += Buffer.byteLength(line);
        relay.child.stdin!.write(line);
      }
      await until(() => relay.stderr().includes("stdin is not read until it is back") || undefined, "the relay to stop reading stdin");
      // Taken off stdin, as the kernel counts the relay's reads (its reconnect attempts read next to nothing).
      const taken = bytesRead(relay.child.pid!) - before;
      expect(taken).toBeGreaterThanOrEqual(8 * MiB);
      expect(taken).toBeLessThan(12 * MiB);
      expect(written).toBeGreaterThan(5 * taken);

      gateway = await serve();
      await terminal.waitFor(
        () => terminal.received.filter((m: any) => typeof m.id === "number" && m.id >= 1000).length === lines,
        "every request to be answered",
        60_000,
      );
      const answered = terminal.received.filter((m: any) => typeof m.id === "number" && m.id >= 1000) as Array<{ id: number; error?: { code: number } }>;
      // Answered by the gateway (in its own words), none by the relay as dropped (-32012).
      expect(answered.map((m) => m.id).sort((a, b) => a - b)).toEqual(Array.from({ length: lines }, (_, i) => 1000 + i));
      expect(answered.filter((m) => m.error?.code === -32012)).toEqual([]);

      relay.end();
      expect(await relay.exit).toEqual({ code: 0, signal: null });
      expect(relay.stderr()).toContain("REDACTED");
      expect(relay.stderr()).not.toContain("query-secret-5");
    },
    120_000,
  );
});
