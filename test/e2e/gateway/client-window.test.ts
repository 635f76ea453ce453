import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { spawnLineChild } from "../../support/line-child.js";

/**
 * A client outside the tested version window is served as any other, and the gateway's log names
 * its family and version; one inside it, or of no known family, leaves no such line. Over the
 * real commands, `tau-gateway app-server` (Codex) and `tau-gateway acp`, as clients spawn them.
 * The Codex answer's userAgent names the Codex release the gateway serves, so the Codex UIs do not
 * take it for an older server.
 */

const cleanups = cleanupsAfterEach();

/** Initializes one `tau-gateway COMMAND` process with `params`; its answer and, once stdin has ended and it has exited, its whole log. */
async function initializeOnce(command: "app-server" | "acp", params: Record<string, unknown>): Promise<{ answer: Record<string, any>; log: string }> {
  let resolveAnswer: (line: string) => void;
  const answered = new Promise<string>((resolve) => (resolveAnswer = resolve));
  const child = spawnLineChild([command], cleanups, (line) => resolveAnswer(line));
  child.write(JSON.stringify({ ...(command === "acp" ? { jsonrpc: "2.0" } : {}), id: 1, method: "initialize", params }));
  const answer = JSON.parse(await answered) as Record<string, any>;
  child.end();
  await child.exit;
  return { answer, log: child.stderr() };
}

describe("the client version window", () => {
  it("warns about a Codex client outside it, names its version, and serves it", async () => {
    const { answer, log } = await initializeOnce("app-server", { clientInfo: { name: "codex-tui", version: "0.172.0" } });
    expect(answer.result.userAgent).toMatch(/^tau-gateway\/0\.171\.0 \(tau-gateway \S+; /);
    expect(log).toContain("Codex CLI (terminal UI) 0.172.0 is newer than every release tested with this gateway (0.169.0 to 0.171.0)");
    const older = await initializeOnce("app-server", { clientInfo: { name: "codex-tui", version: "0.150.0" } });
    expect(older.answer.result).toBeDefined();
    expect(older.log).toContain("Codex CLI (terminal UI) 0.150.0 is older than every release tested");
  });

  it("says nothing of a Codex client inside it or of an unknown one", async () => {
    for (const clientInfo of [{ name: "codex-tui", version: "0.171.0" }, { name: "codex-tui", version: "0.169.0" }, { name: "my-own-client", version: "9.9.9" }]) {
      const { answer, log } = await initializeOnce("app-server", { clientInfo });
      expect(answer.result.userAgent, clientInfo.version).toMatch(/^tau-gateway\/0\.171\.0 /);
      expect(log, clientInfo.version).not.toContain("tested with this gateway");
    }
  });

  it("warns about an ACP client outside it, and not about one inside", async () => {
    const outside = await initializeOnce("acp", { protocolVersion: 1, clientInfo: { name: "acpx", version: "0.18.0" } });
    expect(outside.answer.result.protocolVersion).toBe(1);
    expect(outside.log).toContain("acpx 0.18.0 is older than every release tested with this gateway (0.19.1 to 0.19.1)");
    const inside = await initializeOnce("acp", { protocolVersion: 1, clientInfo: { name: "acpx", version: "0.19.1" } });
    expect(inside.log).not.toContain("tested with this gateway");
  });
});
