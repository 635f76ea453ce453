import { readFile } from "node:fs/promises";

/**
 * The operator's JSON settings files (the tools config, the tokens file): every error starts with
 * the file's name, so a message read in a start-up log points straight at the file to fix.
 */

/** The text of a settings file; `what` says which file it is meant to be ("the tokens file"). */
export async function readConfigFile(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new Error(`${path}: cannot read ${what}: ${(error as Error).message}`);
  }
}

/** The JSON document of a settings file's text; `source` names the file. */
export function parseConfigJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${source}: not valid JSON: ${(error as Error).message}`);
  }
}

/** One error listing every problem found in a settings file, a line each, each naming the file. */
export function configFileError(source: string, problems: readonly string[]): Error {
  return new Error(problems.map((problem) => `${source}: ${problem}`).join("\n"));
}
