import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

// The embedded host's login shells read the user's profile: give them an empty home, as the main suite does.
const home = mkdtempSync(join(tmpdir(), "tau-gateway-interop-home-"));

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    env: { HOME: home },
    // Each client spawns the gateway (and codex-acp a process of its own): one file at a time on two cores.
    maxWorkers: 1,
  },
});
