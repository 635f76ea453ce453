import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { docBlock, shellCommands } from "../support/docs.js";

/**
 * The package as a client repository installs it: `npm pack` in a clean copy of this checkout's
 * files (as a git install clones them: no dist/), which must build the package itself (`prepare`),
 * then `npm install TARBALL` in a folder of its own, and the installed `tau-gateway` bin and library
 * used from there, on the production dependencies alone. Slow (a build and a real npm install), so
 * one test.
 */

const NETWORK_ERROR = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network|socket hang up/i;
const temporary: string[] = [];
const children: Array<ReturnType<typeof spawn>> = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
  // A checkout's copy and an installed node_modules: tens of thousands of files to remove on a loaded machine.
}, 120_000);

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const tempDir = (prefix: string) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  temporary.push(dir);
  return dir;
};

describe("the package", () => {
  it("packs from a clean checkout (prepare builds dist/), installs from the tarball with no dev dependency, and its bin and library work", { timeout: 300_000 }, async () => {
    // A clean copy: the files git has (tracked, or new and not ignored), none of this checkout's dist/.
    const checkout = tempDir("tau-gateway-checkout-");
    const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: repoRoot, encoding: "utf8" }).split("\0");
    for (const file of files.filter((f) => f !== "" && existsSync(join(repoRoot, f)) && statSync(join(repoRoot, f)).isFile())) {
      mkdirSync(dirname(join(checkout, file)), { recursive: true });
      cpSync(join(repoRoot, file), join(checkout, file));
    }
    expect(existsSync(join(checkout, "dist")), "the copy has no dist/").toBe(false);
    // Its dependencies, development ones included, as a git install has them when `prepare` runs.
    symlinkSync(join(repoRoot, "node_modules"), join(checkout, "node_modules"), "dir");

    const packDir = tempDir("tau-gateway-pack-");
    const packed = await run("npm", ["pack", "--json", "--pack-destination", packDir], checkout);
    expect(packed.code, `npm pack failed:\n${packed.stderr}`).toBe(0);
    const [manifest] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as Array<{ filename: string; files: Array<{ path: string; mode: number }> }>;
    const paths = manifest!.files.map((f) => f.path);
    for (const expected of ["dist/tau-gateway.mjs", "dist/src/index.js", "dist/src/index.d.ts", "schema/index.json", "inspector/index.html", "package.json", "README.md"]) {
      expect(paths, expected).toContain(expected);
    }
    expect(paths, "the command line's bundle").toContain("dist/tau-gateway.cjs");
    expect(paths.some((p) => p.startsWith("dist/cli-cache/")), "the bundle's code cache").toBe(true);
    expect(paths.some((p) => p.startsWith("dist/validator-cache/")), "the validators' code caches").toBe(true);
    expect(paths.some((p) => p.startsWith("generated/validators/")), "the precompiled validators").toBe(true);
    expect(paths.filter((p) => /^(src|test|scripts|bench|interop|examples|\.ci)\//.test(p)), "no sources, tests or CI files").toEqual([]);

    // A client repository installs the tarball, with the README's command (contract-tests.md shows the same).
    const client = tempDir("tau-gateway-client-");
    writeFileSync(join(client, "package.json"), JSON.stringify({ name: "client", private: true }));
    const readmeInstall = shellCommands(docBlock("README.md", "npm install --save-dev github:OWNER/tau-gateway#COMMIT"));
    const contractInstall = shellCommands(docBlock("docs/contract-tests.md", "npm install --save-dev github:OWNER/tau-gateway#COMMIT"));
    expect(contractInstall).toEqual(readmeInstall.slice(0, 2));
    // The git line is this test's clean copy built by `prepare`; the tarball line runs as written.
    const [, tarballInstall, version] = readmeInstall;
    expect(tarballInstall).toBe(`npm install --save-dev ./${manifest!.filename}`);
    cpSync(join(packDir, manifest!.filename), join(client, manifest!.filename));
    const offline = { npm_config_prefer_offline: "true", npm_config_audit: "false", npm_config_fund: "false" };
    const installed = await run("bash", ["-c", tarballInstall!], client, offline);
    if (installed.code !== 0 && NETWORK_ERROR.test(installed.stderr)) throw new Error(`npm install could not reach the npm registry; this test needs network access (or a warm npm cache):\n${installed.stderr}`);
    expect(installed.code, `npm install failed:\n${installed.stderr}`).toBe(0);
    const devDependencies = Object.keys((JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { devDependencies: Record<string, string> }).devDependencies);
    for (const name of devDependencies) expect(existsSync(join(client, "node_modules", name)), `${name} (a dev dependency) is not installed`).toBe(false);

    // The bin, as npm linked it.
    const bin = join(client, "node_modules/.bin/tau-gateway");
    const { version: packageVersion } = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string };
    expect(await run(bin, ["--version"], client)).toEqual({ code: 0, stdout: `${packageVersion}\n`, stderr: "" });
    // The README's `npx tau-gateway --version`: npx runs the installed bin, fetching nothing.
    expect(version).toBe("npx tau-gateway --version");
    expect(await run("bash", ["-c", version!], client, { npm_config_offline: "true" })).toMatchObject({ code: 0, stdout: `${packageVersion}\n` });
    const gateway = spawn(bin, ["serve", "--port", "0", "--log-level", "warn"], { cwd: client, stdio: ["ignore", "ignore", "pipe"] });
    children.push(gateway);
    const exit = new Promise<number | null>((resolve) => gateway.once("exit", (code) => resolve(code)));
    let stderr = "";
    const address = await new Promise<string>((resolve, reject) => {
      gateway.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
        const listening = /tau-gateway listening on (http:\/\/\S+)/.exec(stderr);
        if (listening) resolve(listening[1]!);
      });
      void exit.then((code) => reject(new Error(`the installed gateway exited with ${code}:\n${stderr}`)));
    });
    const created = await fetch(`${address}/rpc`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/create", params: {} }) });
    expect(await created.json()).toMatchObject({ id: 1, result: { session: { sessionId: expect.any(String) } } });
    gateway.kill("SIGTERM");
    expect(await exit).toBe(0);

    // The library the package exports, imported by name.
    const library = await run(process.execPath, ["--input-type=module", "-e", 'const m = await import("tau-gateway"); console.log(typeof m.TranscriptChecker)'], client);
    expect(library, library.stderr).toMatchObject({ code: 0, stdout: "function\n" });
  });
});
