import { dirname, join } from "node:path";
import { loadWithCodeCache } from "./code-cache.js";
import { schemaDir } from "./schema-files.js";

/** A fast-tier check: the verdict only, no errors worth reading (those come from the detailed tier). */
export type FastCheck = (value: unknown) => boolean;

/**
 * The precompiled fast tier of one bundle (generated/validators/<bundle>.cjs, written by
 * `npm run generate` from the same schema files): one check per `$defs` name. The path comes from
 * schema/index.json, relative to schema/, so it is found wherever the package runs from (src/
 * under tsx, dist/ after a build, an installed package). Loaded synchronously, because a bundle is
 * first loaded inside a check, with the code cache `npm run build` made in dist/ (code-cache.ts).
 */
export function loadFastChecks(validatorsPath: string): ReadonlyMap<string, FastCheck> {
  const file = join(schemaDir(), validatorsPath);
  const { exports } = loadWithCodeCache(file, validatorCacheDir());
  // A Map, not the module's exports object: a definition name is never taken for an inherited member.
  return new Map(Object.entries(exports as Record<string, FastCheck>));
}

/** Where the build puts the validators' code caches: dist/validator-cache/ of the package. */
export function validatorCacheDir(packageDist = join(dirname(schemaDir()), "dist")): string {
  return join(packageDist, "validator-cache");
}
