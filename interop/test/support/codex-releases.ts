import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLIENT_WINDOW } from "../../../src/shared/client-window.js";

const interopRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * The Codex CLI releases the interop suite runs: the oldest and the newest of the client version
 * window (src/shared/client-window.ts), installed side by side in interop/package.json — the pinned
 * one as @openai/codex, the newest under the alias codex-newest.
 */

export interface CodexRelease {
  readonly version: string;
  /** The package's `codex` script (run with node). */
  readonly bin: string;
  /** Where its official schema is committed (test/fixtures/codex-VERSION). */
  readonly schemaFixture: string;
}

const family = CLIENT_WINDOW.find((f) => f.package === "@openai/codex")!;

function installed(folder: string, version: string): CodexRelease {
  const dir = join(interopRoot, "node_modules", folder);
  const found = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
  // The window and the install must agree, or the suite would test a release it does not name.
  if (found !== version) throw new Error(`interop/node_modules/${folder} is @openai/codex ${found}, the client window says ${version}: run npm install --prefix interop`);
  return { version, bin: join(dir, "bin", "codex.js"), schemaFixture: join(interopRoot, "..", "test", "fixtures", `codex-${version}`) };
}

/** Oldest first. */
export const CODEX_RELEASES: readonly CodexRelease[] = [installed(join("@openai", "codex"), family.oldest), installed("codex-newest", family.newest)];
