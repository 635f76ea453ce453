import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { runCliProcess, serveCli, startCliProcess } from "../../support/cli.js";

/**
 * `--remote` takes a running gateway's address. A URL of some other WebSocket server — a Tau host,
 * whose `ready` frame the relay would otherwise hand the client as if the gateway had sent it —
 * is refused at the start, saying what it is and what to give instead, with exit 1.
 */

const cleanups = cleanupsAfterEach();
const HOST_LISTENING = /^tau host listening on (ws:\/\/\S+)$/m;

describe("--remote pointed at something that is not tau-gateway", () => {
  it("a Tau host: every stdio command refuses it at the start, with exit 1 and nothing on stdout", { timeout: 60_000 }, async () => {
    const host = await startCliProcess(["host", "--port", "0"], HOST_LISTENING, cleanups);
    for (const command of ["acp", "app-server", "stdio"]) {
      const result = await runCliProcess([command, "--remote", host.address]);
      expect(result.stdout, command).toBe("");
      expect(result.code, command).toBe(1);
      expect(result.stderr, command).toContain(" is not a tau-gateway endpoint: the server accepted the WebSocket without saying it is tau-gateway (a Tau host, or another server). --remote takes the address of a running tau-gateway serve (ws://HOST:PORT); a Tau host is served with --upstream\n");
    }
  });

  it("a gateway's own routes say which dialect they speak", { timeout: 60_000 }, async () => {
    const gateway = await serveCli(["--port", "0", "--log-level", "warn"], cleanups);
    const { default: WebSocket } = await import("ws");
    for (const [route, dialect] of [["/", "codex"], ["/acp", "acp"], ["/rpc", "ask"], ["/tau", "tau"]]) {
      const socket = new WebSocket(`${gateway.baseUrl.replace("http://", "ws://")}${route}`);
      const header = await new Promise<string | string[] | undefined>((resolve, reject) => {
        socket.once("upgrade", (response) => resolve(response.headers["x-tau-gateway-dialect"]));
        socket.once("error", reject);
      });
      socket.on("open", () => socket.close());
      expect(header, route).toBe(dialect);
    }
  });
});
