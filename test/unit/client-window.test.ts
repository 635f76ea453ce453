import { describe, expect, it } from "vitest";
import { CLIENT_WINDOW, clientOutsideWindow, CODEX_COMPATIBLE_VERSION, compareVersions, outsideWindowMessage } from "../../src/shared/client-window.js";

/** The client version window as data: which connections are outside it, and by which side. */
describe("the client version window", () => {
  it("holds the tested oldest and newest release of each client family", () => {
    expect(CLIENT_WINDOW.map((f) => [f.package, f.oldest, f.newest])).toEqual([
      ["@openai/codex", "0.169.0", "0.171.0"],
      ["ai-sdk-provider-codex-app-server", "1.1.7", "1.1.7"],
      ["@agentclientprotocol/codex-acp", "2.6.0", "2.6.0"],
      ["@agentclientprotocol/sdk", "2.4.0", "2.4.0"],
      ["acpx", "0.19.1", "0.19.1"],
    ]);
    for (const f of CLIENT_WINDOW) expect(compareVersions(f.oldest, f.newest), f.family).toBeLessThanOrEqual(0);
    expect(CODEX_COMPATIBLE_VERSION).toBe("0.171.0");
  });

  it("finds a known client outside its window, on either side, and says so naming its version", () => {
    expect(clientOutsideWindow("codex", { name: "codex-tui", version: "0.168.2" })).toMatchObject({ family: "Codex CLI (terminal UI)", version: "0.168.2", side: "older" });
    const newer = clientOutsideWindow("codex", { name: "codex-tui", version: "0.172.0" });
    expect(newer).toMatchObject({ side: "newer", oldest: "0.169.0", newest: "0.171.0" });
    expect(outsideWindowMessage(newer!)).toBe("Codex CLI (terminal UI) 0.172.0 is newer than every release tested with this gateway (0.169.0 to 0.171.0); it is served, but untested");
    expect(clientOutsideWindow("acp", { name: "acpx", version: "0.20.0" })).toMatchObject({ family: "acpx", side: "newer" });
    expect(clientOutsideWindow("codex", { name: "@agentclientprotocol/codex-acp", version: "2.5.9" })).toMatchObject({ side: "older" });
  });

  it("leaves inside the window, unknown clients, other dialects' names and versions that are not x.y.z alone", () => {
    for (const version of ["0.169.0", "0.170.3", "0.171.0"]) expect(clientOutsideWindow("codex", { name: "codex-tui", version })).toBeUndefined();
    expect(clientOutsideWindow("codex", { name: "codex-tests", version: "1" })).toBeUndefined();
    expect(clientOutsideWindow("acp", { name: "codex-tui", version: "0.1.0" })).toBeUndefined();
    expect(clientOutsideWindow("codex", { name: "codex-tui", version: "dev" })).toBeUndefined();
    expect(clientOutsideWindow("codex", null)).toBeUndefined();
    // The AI SDK provider names 1.0.0 from every release: that is its window on the wire.
    expect(clientOutsideWindow("codex", { name: "ai-sdk-provider-codex-app-server", version: "1.0.0" })).toBeUndefined();
    expect(clientOutsideWindow("codex", { name: "ai-sdk-provider-codex-app-server", version: "1.1.7" })).toMatchObject({ side: "newer" });
  });

  it("orders versions as releases: numerically, a pre-release before its release", () => {
    expect(compareVersions("0.10.0", "0.9.9")).toBeGreaterThan(0);
    expect(compareVersions("0.171.0-alpha.1", "0.171.0")).toBeLessThan(0);
    expect(compareVersions("v1.2.3", "1.2.3")).toBe(0);
    expect(compareVersions("1.2", "1.2.0")).toBeUndefined();
  });
});
