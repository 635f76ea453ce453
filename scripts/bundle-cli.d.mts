/** Writes dist/tau-gateway.mjs, its chunks and source map, and the validators' code caches into `outDir`. */
export function bundleCli(outDir: string): Promise<void>;
/** `--outDir DIR` of the command line, relative to the repository; dist/ without it. */
export function outDirOf(args: string[]): string;
