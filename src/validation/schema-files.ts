import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Locates the committed schema/ folder from wherever this module runs (src/ under tsx, dist/src/
 * after a build, node_modules/tau-gateway/ in a client project) by walking up to the package root.
 */
export function schemaDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "schema", "index.json");
    if (existsSync(candidate)) return join(dir, "schema");
    const parent = dirname(dir);
    if (parent === dir) throw new Error("tau-gateway: schema/index.json not found above " + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export function readSchemaFile<T = unknown>(name: string): T {
  return JSON.parse(readFileSync(join(schemaDir(), name), "utf8")) as T;
}
