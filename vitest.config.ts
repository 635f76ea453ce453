import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

// Login shells run by the embedded host (session.exec, /bash) read the user's profile. Tests give
// them an empty home so results do not depend on the machine's shell set-up (or its speed).
const home = mkdtempSync(join(tmpdir(), "tau-gateway-test-home-"));

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    env: { HOME: home },
    // Suites start real servers on loopback; two workers match the two cores CI has.
    maxWorkers: 2,
  },
});
