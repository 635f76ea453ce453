import { readFile } from "node:fs/promises";
import { Ajv2019 } from "ajv/dist/2019.js";
import { describe, expect, it } from "vitest";
import { generateOutputs } from "../../../src/codegen/outputs.js";
import { readSchemaFile } from "../../../src/validation/schema-files.js";

// Checks of the whole generated output that take seconds each (json-schema-to-typescript, ajv
// compiling every definition), so they run with the slow tests rather than in `npm run test:unit`;
// test/unit/registry.test.ts compares one fresh generation with the committed files.
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

describe("the generated schema", () => {
  it("compiles every definition of every bundle in ajv strict mode", async () => {
    const index = readSchemaFile<{ bundles: { schema: string }[] }>("index.json");
    for (const { schema: file } of index.bundles) {
      const ajv = new Ajv2019({ strict: true, allowUnionTypes: true });
      const bundle = JSON.parse(await readFile(new URL(`../../../schema/${file}`, import.meta.url), "utf8"));
      ajv.addSchema(bundle);
      for (const name of Object.keys(bundle.$defs)) expect(ajv.getSchema(`${bundle.$id}#/$defs/${name}`), `${file} ${name}`).toBeTypeOf("function");
      expect(ajv.compile({ $ref: bundle.$id })).toBeTypeOf("function");
    }
  }, 120_000); // seconds idle; a 2-core machine at load 20 took over 30
});
