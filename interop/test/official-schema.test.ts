import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OFFICIAL_BUNDLE } from "../../test/support/codex-official-schema.js";
import { CODEX_RELEASES } from "./support/codex-releases.js";
import { generatedSchemaDir } from "./support/gateway-process.js";

/**
 * The main suite checks the gateway against committed copies of the official schema of each
 * release of the client window: each must be exactly what that @openai/codex generates.
 */
describe.each(CODEX_RELEASES)("the committed official schema of $version", (release) => {
  for (const kind of ["", "experimental"]) {
    it(`is what @openai/codex ${release.version} generates${kind ? " with --experimental" : ""}`, () => {
      const read = (dir: string) => JSON.parse(readFileSync(join(dir, kind, OFFICIAL_BUNDLE), "utf8"));
      expect(read(release.schemaFixture)).toEqual(read(generatedSchemaDir(release)));
    });
  }
});
