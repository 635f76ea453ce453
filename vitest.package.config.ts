import { defineConfig } from "vitest/config";

// `npm run test:package`: the package as others install it — `npm pack` from a clean checkout and
// `npm install` of the tarball, the image's runtime stage reproduced without Docker. Each is a
// build and a real npm install (about a minute between them on two cores), so they run here, in CI
// (.ci/run) beside the container and interop checks, and not in `npm test`'s edit loop.
export default defineConfig({
  test: {
    include: ["test/package/**/*.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
  },
});
