import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SERVE_USAGE } from "../../src/cli/serve.js";
import { repoRoot } from "../support/cli.js";

/**
 * The deployment documentation keeps up with `tau-gateway serve`: every setting's variable is in
 * the README's table (and nothing that no longer exists), and the Dockerfile only sets variables
 * the gateway reads.
 */

const servedVariables = () => new Set(SERVE_USAGE.match(/TAU_GATEWAY_[A-Z0-9_]+/g));

function readmeTableVariables(): string[] {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
  const start = readme.indexOf("### Environment variables");
  expect(start, "README has an Environment variables section").toBeGreaterThan(-1);
  const section = readme.slice(start, readme.indexOf("\n## ", start) === -1 ? undefined : readme.indexOf("\n## ", start));
  return [...section.matchAll(/^\| `(TAU_GATEWAY_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]!);
}

describe("deployment documentation", () => {
  it("lists every serve setting's environment variable in the README table, and only those", () => {
    const documented = readmeTableVariables();
    expect(new Set(documented).size, "no variable listed twice").toBe(documented.length);
    expect([...documented].sort()).toEqual([...servedVariables()].sort());
  });

  it("sets only variables the gateway reads in the Dockerfile", () => {
    const dockerfile = readFileSync(join(repoRoot, "Dockerfile"), "utf8");
    const set = [...dockerfile.matchAll(/\b(TAU_GATEWAY_[A-Z0-9_]+)=/g)].map((m) => m[1]!);
    expect(set.length).toBeGreaterThan(0);
    for (const name of set) expect(servedVariables(), name).toContain(name);
  });
});
