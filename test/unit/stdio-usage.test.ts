import { describe, expect, it } from "vitest";
import { GATEWAY_ROUTES, loadDialects } from "../../src/cli/dialects/loaded.js";
import { stdioCommandSettings } from "../../src/cli/dialects/stdio-settings.js";
import { remoteSettings } from "../../src/cli/remote.js";

/**
 * Each stdio command's `--help` names exactly the flags it reads: one it takes but does not list
 * (app-server's --workspace-root once) is as untrue as one it lists but refuses.
 */
describe("the stdio commands' usage", () => {
  it("lists every flag the command reads, and only those", async () => {
    for (const { command, route, descriptor } of await loadDialects()) {
      const specs = { ...remoteSettings(route, GATEWAY_ROUTES), ...stdioCommandSettings, ...descriptor.command.settings };
      const read = Object.values(specs as Record<string, { flag: string }>).map((spec) => spec.flag).sort();
      const usage = descriptor.command.usage;
      // The options are the lines that start with a flag; the prose may name other commands' flags.
      const listed = [...usage.matchAll(/^ {2}--([a-z][a-z-]*)/gm)].map((m) => m[1]!).sort();
      expect(listed, command).toEqual([...new Set(read)].sort());
    }
  });
});
