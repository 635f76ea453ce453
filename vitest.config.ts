import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

// Login shells run by the embedded host (session.exec, /bash) read the user's profile. Tests give
// them an empty home so results do not depend on the machine's shell set-up (or its speed).
const home = mkdtempSync(join(tmpdir(), "tau-gateway-test-home-"));

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for what real servers and a real browser do; its 1 s default fails a test on a
    // loaded machine that would pass a moment later. A poll that passes returns as soon as it does.
    expect: { poll: { timeout: 10_000 } },
    env: { HOME: home },
    // Suites start real servers and processes on loopback and mostly wait on them: two workers kept
    // 1.3 of CI's two cores busy (306 s), three 1.6 (224 s); four finish the suite in 202 s where
    // three took 227 s on the same tree (1,614 tests, 3 December).
    maxWorkers: 4,
    projects: [
      // `npm run test:unit`: the edit loop's quick run, with no command-line bundle to build first.
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"] } },
      // Real servers, clients and processes; the processes run the bundle built once for the run
      // (test/container/ runs the real image, and only when test/container/run.sh has built one).
      // The files share their workers' module graphs (isolate: false): each gateway is built from its
      // own instances, and importing the sources anew for every file cost more than most files' tests.
      {
        extends: true,
        test: { name: "e2e", include: ["test/e2e/**/*.test.ts", "test/fuzz/**/*.test.ts", "test/container/**/*.test.ts"], globalSetup: ["test/setup/built-cli.ts"], isolate: false },
      },
    ],
  },
});
