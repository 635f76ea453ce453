import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Principal } from "../../src/gateway/auth/tokens.js";

/** One entry of a tokens file (`--tokens-file`) as a test writes it: the token itself, not its digest. */
export type TokensFileEntry = { id: string; token: string } & Pick<Principal, "tenant" | "operator" | "sessionRole">;

/** Writes `tokens.json` with `entries` into `dir` (a folder of the test's own) and returns its path. */
export function writeTokensFile(dir: string, entries: readonly TokensFileEntry[]): string {
  const file = join(dir, "tokens.json");
  writeFileSync(file, JSON.stringify(entries));
  return file;
}
