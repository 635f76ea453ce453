import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../support/cli.js";
import { documentedPages, pageBlocks } from "../../support/docs.js";

/**
 * Every fenced block of the README and docs/ is run or checked by a test as written, or named
 * below with the reason it cannot be: a block added to a page, or one whose text changes so
 * that the test taking it no longer finds it, fails here until a test takes it or it is listed.
 * Tests take a block with `docBlock(PAGE, START)` (test/support/docs.ts), literal arguments,
 * which this file finds in the test files (test/ and interop/test/, the heavy real clients).
 */

interface Skipped {
  page: string;
  /** How the block starts, as docBlock's START. */
  start: string;
  reason: string;
}

const SKIPPED: Skipped[] = [
  {
    page: "README.md",
    start: "npm ci && npm start",
    reason: "this checkout's own set-up: npm ci reinstalls the shared dependencies and npm test is the whole suite (.ci/run runs both); npm start is `serve` after a build, which every serve test runs",
  },
  {
    page: "README.md",
    start: "TAU_GATEWAY_TOKEN=change-me npm start\nTAU_TOKEN=change-me codex --remote",
    reason: "the Codex terminal UI is interactive: interop/test/codex-tui.test.ts drives it in tmux with --remote and --remote-auth-token-env against serve",
  },
  {
    page: "docs/acp.md",
    start: 'acpx --agent "tau-gateway acp"',
    reason: "acpx is a heavy real client installed in interop/ only: interop/test/acpx.test.ts runs it with `tau-gateway acp` as its agent, --approve-all and --format json",
  },
  {
    page: "docs/codex.md",
    start: "TAU_GATEWAY_TOKEN=change-me npx tau-gateway serve --tools-config tools.json",
    reason: "the Codex terminal UI is interactive (interop/test/codex-tui.test.ts); the page's tools.json and the directive typed in it run in docs-tools-example.test.ts",
  },
  {
    page: "docs/codex.md",
    start: "CODEX_PATH=/path/to/node_modules/.bin/tau-gateway npx @agentclientprotocol/codex-acp",
    reason: "codex-acp is a heavy real client installed in interop/ only: interop/test/codex-acp.test.ts spawns it with CODEX_PATH set to tau-gateway",
  },
  { page: "docs/deployment.md", start: "docker build -t tau-gateway .", reason: "Docker: .ci/run builds the image and test/container/ runs it" },
  { page: "docs/deployment.md", start: "docker run --rm tau-gateway --help", reason: "Docker: test/container/image.test.ts runs the built image's commands" },
  {
    page: "docs/deployment.md",
    start: "sudo mkdir -p /srv/tau-workspace",
    reason: "root and Docker: test/container/image.test.ts runs the image read-only with its workspace volume, token and --trust-proxy",
  },
  { page: "docs/deployment.md", start: "docker network inspect bridge", reason: "reads the Docker daemon's bridge network, which a test machine without Docker lacks" },
  { page: "docs/operations.md", start: "docker run --stop-timeout 70", reason: "Docker: the drain deadline it sets runs in serve-drain-deadline.test.ts, the image's stop in test/container/" },
  { page: "docs/operations.md", start: "# docker compose", reason: "a Compose file needs Docker Compose; the drain deadline it sets runs in serve-drain-deadline.test.ts" },
  { page: "docs/operations.md", start: "# Kubernetes pod spec", reason: "a pod spec needs a Kubernetes cluster; the drain deadline it sets runs in serve-drain-deadline.test.ts" },
  {
    page: "docs/performance.md",
    start: "npm ci\nsudo apt-get install nginx",
    reason: "the benchmark: minutes of load on the machine, for people comparing builds; npm ci reinstalls the shared dependencies",
  },
  { page: "docs/performance.md", start: "npm run bench -- --compare main", reason: "the benchmark comparing builds: builds another ref and runs minutes of load" },
  { page: "docs/testing.md", start: 'FUZZ_TARGETS="stdio (NDJSON)" FUZZ_SEED=31238', reason: "replays a fuzz failure: the bounded fuzz pass runs in npm test (test/fuzz/), and the path is a past failure's" },
  { page: "docs/testing.md", start: "npm run fuzz", reason: "long fuzz runs (100,000 cases per dialect): minutes of load, for people hunting bugs" },
];

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === "node_modules") return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? testFiles(path) : entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Every `docBlock("PAGE", "START")` call of the test files, with the file making it. */
function takenBlocks(): Array<{ file: string; page: string; start: string }> {
  const literal = `("(?:[^"\\\\]|\\\\.)*"|'(?:[^'\\\\]|\\\\.)*')`;
  const call = new RegExp(`\\bdocBlock\\(\\s*${literal}\\s*,\\s*${literal}\\s*\\)`, "g");
  return [join(repoRoot, "test"), join(repoRoot, "interop/test")].flatMap(testFiles).flatMap((path) => {
    const file = relative(repoRoot, path);
    if (file === "test/e2e/docs/docs-blocks.test.ts") return [];
    return [...readFileSync(path, "utf8").matchAll(call)].map((m) => ({ file, page: stringLiteral(m[1]!), start: stringLiteral(m[2]!) }));
  });
}

/** The value of a JavaScript string literal in double or single quotes. */
function stringLiteral(source: string): string {
  if (source.startsWith('"')) return JSON.parse(source) as string;
  return JSON.parse(`"${source.slice(1, -1).replace(/\\'/g, "'").replace(/"/g, '\\"')}"`) as string;
}

describe("the documentation's code blocks", () => {
  const taken = takenBlocks();
  const blocks = documentedPages().flatMap(pageBlocks);

  it("each is taken by a test or skipped with a reason, not both", () => {
    const unaccounted = blocks.flatMap((block) => {
      const by = taken.filter((t) => t.page === block.page && block.text.startsWith(t.start)).map((t) => t.file);
      const skips = SKIPPED.filter((s) => s.page === block.page && block.text.startsWith(s.start));
      if (by.length > 0 && skips.length === 0) return [];
      if (by.length === 0 && skips.length === 1) return [];
      const where = `${block.page}:${block.line} (${block.language || "no language"}) ${JSON.stringify(block.text.split("\n")[0])}`;
      return [by.length === 0 && skips.length === 0 ? `${where}: no test takes it and it is not skipped` : `${where}: taken by ${by.join(", ") || "none"}, skipped ${skips.length} times`];
    });
    expect(unaccounted).toEqual([]);
  });

  it("what the tests take and the skip list names each match exactly one block", () => {
    const ambiguous = [...taken.map((t) => ({ ...t, what: `taken by ${t.file}` })), ...SKIPPED.map((s) => ({ ...s, what: "skipped" }))].flatMap((entry) => {
      const matches = blocks.filter((b) => b.page === entry.page && b.text.startsWith(entry.start));
      return matches.length === 1 ? [] : [`${entry.page} ${JSON.stringify(entry.start)} (${entry.what}): ${matches.length} blocks`];
    });
    expect(ambiguous).toEqual([]);
  });

  it("each skip has its reason", () => {
    for (const skip of SKIPPED) expect(skip.reason.length, `${skip.page} ${skip.start}`).toBeGreaterThan(20);
  });
});
