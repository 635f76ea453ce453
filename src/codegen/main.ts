import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { GENERATED_DIRS, generateOutputs } from "./outputs.js";

/**
 * `npm run generate` (write) and `npm run check:generated` (check). The check writes a fresh
 * generation into a temporary folder and compares it with the committed files, so drift between
 * the registry and schema/ or generated/ fails CI.
 */

async function listFiles(root: string, dir: string): Promise<string[]> {
  const entries = await readdir(join(root, dir), { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...(await listFiles(root, rel)));
    else out.push(rel);
  }
  return out;
}

async function writeAll(root: string, files: Map<string, string>) {
  for (const dir of GENERATED_DIRS) {
    for (const stale of await listFiles(root, dir)) if (!files.has(stale)) await rm(join(root, stale));
  }
  for (const [rel, content] of files) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), content);
  }
}

async function main() {
  const mode = process.argv[2];
  const root = process.cwd();
  const files = await generateOutputs();
  if (mode === "write") {
    await writeAll(root, files);
    process.stdout.write(`generated ${files.size} files in ${GENERATED_DIRS.join("/, ")}/\n`);
    return;
  }
  if (mode !== "check") {
    process.stderr.write("usage: tsx src/codegen/main.ts write|check\n");
    process.exitCode = 2;
    return;
  }
  const fresh = await mkdtemp(join(tmpdir(), "tau-gateway-generate-"));
  try {
    await writeAll(fresh, files);
    const problems: string[] = [];
    const committed = new Set<string>();
    for (const dir of GENERATED_DIRS) for (const f of await listFiles(root, dir)) committed.add(f);
    for (const rel of files.keys()) {
      if (!committed.has(rel)) {
        problems.push(`missing: ${rel}`);
        continue;
      }
      const [want, have] = await Promise.all([readFile(join(fresh, rel), "utf8"), readFile(join(root, rel), "utf8")]);
      if (want !== have) problems.push(`differs: ${rel}${firstDifference(want, have)}`);
    }
    for (const rel of committed) if (!files.has(rel)) problems.push(`not generated (remove it): ${rel}`);
    if (problems.length) {
      process.stderr.write(`generated files are out of date — run \`npm run generate\` and commit:\n  ${problems.join("\n  ")}\n`);
      process.exitCode = 1;
    } else {
      process.stdout.write(`generated files are up to date (${files.size} files)\n`);
    }
  } finally {
    await rm(fresh, { recursive: true, force: true });
  }
}

function firstDifference(want: string, have: string): string {
  const a = want.split("\n");
  const b = have.split("\n");
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return ` (first at line ${i + 1})`;
  }
  return "";
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
