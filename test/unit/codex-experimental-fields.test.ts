import { describe, expect, it } from "vitest";
import { CODEX_METHOD_NAMES } from "../../src/codex/codex-surface.js";
import { EXPERIMENTAL_FIELDS, EXPERIMENTAL_METHODS } from "../../generated/codex-v2.js";
import { experimentalFieldUsed } from "../../src/codex/codex-surface.js";
import { OFFICIAL_RELEASES, officialDefinition, officialMethods, officialSchemaDir, readOfficialSchema } from "../support/codex-official-schema.js";

/**
 * The experimental params fields the Codex surface gates are exactly those the official
 * experimental bundle has and the stable one lacks, for every method the gateway serves, in each
 * release of the client window (0.169.0 and 0.171.0 agree).
 */

const releases = OFFICIAL_RELEASES.map((release) => ({
  release,
  stable: readOfficialSchema("stable", officialSchemaDir(release)),
  experimental: readOfficialSchema("experimental", officialSchemaDir(release)),
}));

function fieldsOf(schema: ReturnType<typeof readOfficialSchema>, method: string): Set<string> {
  const params = officialMethods(schema, "ClientRequest").get(method);
  const definition = params === undefined ? undefined : officialDefinition(schema, params);
  return new Set(Object.keys(definition?.properties ?? {}));
}

describe.each(releases)("experimental params fields of $release", ({ stable, experimental }) => {
  it("are the fields only the experimental bundle has, method by method", () => {
    const expected: Record<string, string[]> = {};
    for (const method of CODEX_METHOD_NAMES) {
      const stableFields = fieldsOf(stable, method);
      // A method only the experimental bundle has is gated as a whole, not field by field.
      if (stableFields.size === 0) continue;
      const only = [...fieldsOf(experimental, method)].filter((f) => !stableFields.has(f)).sort();
      if (only.length) expected[method] = only;
    }
    expect(Object.fromEntries(Object.entries(EXPERIMENTAL_FIELDS).map(([m, f]) => [m, [...f].sort()]))).toEqual(expected);
  });

  it("leave the methods only the experimental bundle has to be gated as a whole", () => {
    const stableMethods = officialMethods(stable, "ClientRequest");
    const experimentalMethods = officialMethods(experimental, "ClientRequest");
    const expected = CODEX_METHOD_NAMES.filter((m) => experimentalMethods.has(m) && !stableMethods.has(m)).sort();
    expect(expected.length).toBeGreaterThan(0);
    expect([...EXPERIMENTAL_METHODS].sort()).toEqual(expected);
  });

  it("count as used when they hold a value, null included as none", () => {
    expect(experimentalFieldUsed("turn/start", { threadId: "t", input: [], collaborationMode: { mode: "plan" } })).toBe("turn/start.collaborationMode");
    expect(experimentalFieldUsed("turn/start", { threadId: "t", input: [], collaborationMode: null })).toBeUndefined();
    expect(experimentalFieldUsed("thread/start", { dynamicTools: [] })).toBe("thread/start.dynamicTools");
    expect(experimentalFieldUsed("thread/read", { threadId: "t" })).toBeUndefined();
  });
});
