/** Writes the launcher dist/tau-gateway.mjs, the bundle dist/tau-gateway.cjs and its source map, its code cache (dist/cli-cache/) and the validators' (dist/validator-cache/) into `outDir`. */
export function bundleCli(outDir: string): Promise<void>;
/** `--outDir DIR` of the command line, relative to the repository; dist/ without it. */
export function outDirOf(args: string[]): string;
