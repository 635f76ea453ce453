import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

// The embedded host's login shells read the user's profile: give them an empty home, as the main suite does.
const home = mkdtempSync(join(tmpdir(), "tau-gateway-interop-home-"));
// The terminal UI's tmux server, this run's own (test/support/codex-tui.ts); killed by the global teardown.
process.env.TAU_INTEROP_TMUX ??= `tau-gateway-interop-${process.pid}`;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    env: { HOME: home },
    globalSetup: ["test/support/tmux-server.ts"],
    // Each client spawns the gateway (and codex-acp a process of its own): one file at a time on two cores.
    maxWorkers: 1,
  },
});
