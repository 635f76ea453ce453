import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OFFICIAL_BUNDLE, OFFICIAL_SCHEMA_DIR } from "../../test/support/codex-official-schema.js";
import { pinnedSchemaDir } from "./support/gateway-process.js";

/** The main suite checks the gateway against a committed copy of the official schema: it must be exactly what the pinned @openai/codex generates. */
describe("the committed official schema", () => {
  for (const kind of ["", "experimental"]) {
    it(`is what @openai/codex 0.169.0 generates${kind ? " with --experimental" : ""}`, () => {
      const read = (dir: string) => JSON.parse(readFileSync(join(dir, kind, OFFICIAL_BUNDLE), "utf8"));
      expect(read(OFFICIAL_SCHEMA_DIR)).toEqual(read(pinnedSchemaDir()));
    });
  }
});
