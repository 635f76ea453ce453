import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startFakeTauPeer } from "../../support/fake-tau-peer.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { runCommand, serveCli } from "../../support/cli.js";
import { TauTestClient } from "../../support/tau-client.js";

/**
 * `tau-gateway serve`: as a real process for its listening line, readiness and SIGTERM; in-process
 * for everything that ends before it serves (bad settings, an upstream it refuses).
 */

const cleanups = cleanupsAfterEach();
const serve = (args: string[]) => serveCli(args, cleanups);

describe("tau-gateway serve", () => {
  it("serves the embedded upstream on a free port, is ready, relays /tau, and exits 0 on SIGTERM", async () => {
    const served = await serve(["--port", "0"]);
    expect(served.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(served.baseUrl).not.toMatch(/:0$/);

    const readyz = await fetch(`${served.baseUrl}/readyz`);
    expect(readyz.status).toBe(200);
    expect(await readyz.json()).toMatchObject({ status: "ready" });

    const client = await TauTestClient.connect(`${served.baseUrl.replace("http://", "ws://")}/tau`);
    cleanups.push(() => client.close());
    expect((await client.call("session.list", {})).sessions).toEqual([]);

    // The Ask surface is wired to /rpc.
    const rpc = new WebSocket(`${served.baseUrl.replace("http://", "ws://")}/rpc`);
    cleanups.push(() => rpc.terminate());
    const answer = new Promise<any>((resolve, reject) => {
      rpc.once("message", (data) => resolve(JSON.parse(data.toString())));
      rpc.once("error", reject);
    });
    rpc.once("open", () => rpc.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })));
    expect(await answer).toMatchObject({ jsonrpc: "2.0", id: 1, result: expect.anything() });

    served.child.kill("SIGTERM");
    expect(await served.exit).toEqual({ code: 0, signal: null });
    // The client was told the gateway went away.
    expect((await client.closed()).code).toBe(1001);
  });

  it("rejects a bad --port with exit 2 and a message naming --port", async () => {
    const result = await runCommand(["serve", "--port", "eighty"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('invalid --port "eighty"');
    expect(result.stderr).not.toContain("listening");
  });

  it("names the environment variable when that is where a bad value came from", async () => {
    const result = await runCommand(["serve"], { env: { TAU_GATEWAY_PORT: "70000" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('invalid TAU_GATEWAY_PORT "70000"');
    // A flag wins over its variable.
    const flagWins = await runCommand(["serve", "--event-retention", "0"], { env: { TAU_GATEWAY_EVENT_RETENTION: "5" } });
    expect(flagWins.stderr).toContain('invalid --event-retention "0"');
  });

  it("rejects unknown flags, bad upstream URLs, bad choices and an unreadable tools config with exit 2", async () => {
    const cases: Array<[string[], string]> = [
      [["--prot", "1"], "--prot"],
      [["--upstream", "http://example.com"], 'invalid --upstream "http://example.com"'],
      [["--jsonrpc-member", "sometimes"], 'invalid --jsonrpc-member "sometimes": must be one of include, omit'],
      [["--default-cwd", "/no/such/dir"], 'invalid --default-cwd "/no/such/dir"'],
      [["--interaction-timeout-ms=-5"], 'invalid --interaction-timeout-ms "-5"'],
      [["--tools-config", "/no/such/tools.json"], 'invalid --tools-config "/no/such/tools.json"'],
    ];
    for (const [argv, message] of cases) {
      const result = await runCommand(["serve", ...argv]);
      expect(result.code, argv.join(" ")).toBe(2);
      expect(result.stderr, argv.join(" ")).toContain(message);
    }
  });

  it("refuses an upstream that speaks another protocol version: exit 1 with a version error", async () => {
    const v17 = await startFakeTauPeer({ ready: { version: 17, type: "ready", methods: ["initialize"] } });
    cleanups.push(() => v17.close());
    const result = await runCommand(["serve", "--port", "0", "--upstream", v17.url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/version 17/);
    expect(result.stderr).toMatch(/18/);
    expect(result.stderr).not.toContain("listening on");
  });
});
