import { describe, expect, it } from "vitest";
import { generateOutputs } from "../../src/codegen/outputs.js";

// Two whole generations (json-schema-to-typescript and the precompiled validators included) take
// seconds each, so this runs with the slow tests; test/unit/registry.test.ts compares one fresh
// generation with the committed files.
describe("the generator", () => {
  it("gives the same bytes when run twice in one process (it leaves the registry it reads unchanged)", async () => {
    const [a, b] = [await generateOutputs(), await generateOutputs()];
    expect([...a.keys()]).toEqual([...b.keys()]);
    for (const [path, content] of a) {
      expect(content, path).toBe(b.get(path));
      expect(content.endsWith("\n") && !content.includes("\r"), path).toBe(true);
    }
  }, 180_000); // minutes on a loaded 2-core machine
});
