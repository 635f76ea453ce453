import { readFile } from "node:fs/promises";
import { Ajv2019 } from "ajv/dist/2019.js";
import { describe, expect, it } from "vitest";
import { generateOutputs } from "../../../src/codegen/outputs.js";
import { readSchemaFile } from "../../../src/validation/schema-files.js";

// Checks of the whole generated output that take seconds each (json-schema-to-typescript, ajv
// compiling every definition), so they run with the slow tests rather than in `npm run test:unit`;
// test/unit/registry.test.ts compares one fresh generation with the committed files.
describe("the generator", () => {
  // test/unit/registry.test.ts compares a generation in a fresh process with the committed files;
  // here the process has run other suites (the e2e files share their workers' module graphs), so a
  // generation equal to the committed files again means nothing that uses the registry changes it.
  it("gives the committed bytes in a process that has used the registry (it leaves what it reads unchanged)", async () => {
    const fresh = await generateOutputs();
    for (const [path, content] of fresh) expect(content, path).toBe(await readFile(new URL(`../../../${path}`, import.meta.url), "utf8"));
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
