import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SERVE_USAGE } from "../../src/cli/serve.js";
import { repoRoot } from "../support/cli.js";
import { docSection } from "../support/docs.js";

/**
 * The deployment documentation keeps up with `tau-gateway serve`: every setting's variable is in
 * the table of docs/configuration.md (and nothing that no longer exists), and the Dockerfile only sets variables
 * the gateway reads.
 */

const servedVariables = () => new Set(SERVE_USAGE.match(/TAU_GATEWAY_[A-Z0-9_]+/g));

function documentedVariables(): string[] {
  const section = docSection("configuration.md", "## Environment variables");
  return [...section.matchAll(/^\| `(TAU_GATEWAY_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]!);
}

describe("deployment documentation", () => {
  it("lists every serve setting's environment variable in the configuration table, and only those", () => {
    const documented = documentedVariables();
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
