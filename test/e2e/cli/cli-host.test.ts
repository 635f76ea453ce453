import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { runCommand, startCliProcess } from "../../support/cli.js";
import { TauTestClient } from "../../support/tau-client.js";

/** `tau-gateway host`: in-process for its usage, as a real process for its listening line and SIGTERM. */

const cleanups = cleanupsAfterEach();
const HOST_LISTENING = /^tau host listening on (ws:\/\/127\.0\.0\.1:(\d+))$/m;

describe("tau-gateway host", () => {
  it("prints its address once listening, serves Tau, and exits 0 on SIGTERM", async () => {
    const host = await startCliProcess(["host", "--port", "0"], HOST_LISTENING, cleanups);
    expect(host.address).not.toMatch(/:0$/);

    const client = await TauTestClient.connect(host.address);
    cleanups.push(() => client.close());
    expect(client.ready.version).toBe(18);

    host.child.kill("SIGTERM");
    expect(await host.exit).toEqual({ code: 0, signal: null });
    expect(host.stderr().trim().split("\n")).toHaveLength(1);
  });

  it("says it cannot listen on a port already in use and exits 1, without a stack", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as AddressInfo).port;
    const result = await runCommand(["host", "--port", String(port)]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`tau-gateway host: cannot listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`);
  });

  it("names an unusable --state-dir and why (a file, not a folder), and exits 1 without listening", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tau-gateway-state-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    for (const stateDir of [file, join(file, "below")]) {
      const result = await runCommand(["host", "--port", "0", "--state-dir", stateDir]);
      expect(result.code, stateDir).toBe(1);
      expect(result.stderr, stateDir).toMatch(new RegExp(`^tau-gateway host: cannot use --state-dir "${stateDir}": (EEXIST|ENOTDIR)\\b.*\\n$`));
    }
  });

  it("rejects a bad port with a usage error (exit 2)", async () => {
    const result = await runCommand(["host", "--port=70000"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^tau-gateway host: --port must be an integer from 0 to 65535 \(got "70000"\)\nusage: tau-gateway host /);
  });

  it("prints its usage on stdout with --help and exits 0", async () => {
    const result = await runCommand(["host", "--help"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(/^usage: tau-gateway host /);
  });
});
