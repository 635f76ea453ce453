import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, isAbsolute, join, posix } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { freePort } from "../support/free-port.js";
import { PAGE_FILES } from "../../src/gateway/inspector/page-files.js";

/**
 * Without a Docker engine (test/container/ runs the real image where one starts), this reproduces
 * the Dockerfile's runtime stage by hand, reading every step from the Dockerfile itself (a change
 * there changes what runs here): the build stage's output (its `npm run build:cli`, then what it removes),
 * a clean directory holding only what the runtime stage COPYs, its `npm ci --omit=dev` (production
 * dependencies only), then the image's ENTRYPOINT and CMD with the image's ENV, the HEALTHCHECK
 * command against it, and SIGTERM. Slow (a real npm install), so one test.
 */

interface Instruction {
  keyword: string;
  args: string;
}

/** Instructions of a Dockerfile: comments dropped, continuation lines joined. */
function parseDockerfile(text: string): Instruction[] {
  const logical: string[] = [];
  let current = "";
  for (const line of text.split("\n")) {
    if (/^\s*#/.test(line)) continue;
    if (line.trimEnd().endsWith("\\")) {
      current += `${line.trimEnd().slice(0, -1)} `;
      continue;
    }
    current += line;
    if (current.trim() !== "") logical.push(current.trim());
    current = "";
  }
  return logical.map((line) => {
    const [keyword, ...rest] = line.split(/\s+/);
    return { keyword: keyword!.toUpperCase(), args: line.slice(keyword!.length).trim() };
  });
}

/** `K=V K2="V 2"` pairs of an ENV instruction. */
function parseEnv(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const match of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("([^"]*)"|\S*)/g)) out[match[1]!] = match[3] ?? match[2]!;
  return out;
}

/** The JSON array of an exec-form CMD (also the CMD part of HEALTHCHECK). */
function execForm(args: string, what: string): string[] {
  const json = args.slice(args.indexOf("["));
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new Error(`${what} must use the exec form (a JSON array), so signals reach node: ${args}`);
  }
  expect(Array.isArray(value) && value.every((v) => typeof v === "string"), `${what} exec form`).toBe(true);
  return value as string[];
}

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

const NETWORK_ERROR = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network|socket hang up/i;

const temporary: string[] = [];
const children: Array<ReturnType<typeof spawn>> = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

describe("Dockerfile runtime stage", () => {
  it("installs production dependencies only, starts with the image's ENTRYPOINT, CMD and ENV, passes its HEALTHCHECK, and exits 0 on SIGTERM", { timeout: 300_000 }, async () => {
    const instructions = parseDockerfile(readFileSync(join(repoRoot, "Dockerfile"), "utf8"));
    const stageStarts = instructions.flatMap((ins, i) => (ins.keyword === "FROM" ? [i] : []));
    expect(stageStarts.length, "a multi-stage build").toBeGreaterThanOrEqual(2);
    const stages = stageStarts.map((start, i) => instructions.slice(start, stageStarts[i + 1]));
    const stageName = (stage: Instruction[]) => /\bAS\s+(\S+)/i.exec(stage[0]!.args)?.[1];
    const workdirOf = (stage: Instruction[]) => stage.filter((i) => i.keyword === "WORKDIR").at(-1)?.args ?? "/";
    const runtime = stages.at(-1)!;
    const build = stages[0]!;
    const of = (keyword: string) => runtime.filter((i) => i.keyword === keyword);
    // Build arguments declared before the first FROM, with their defaults.
    const args = Object.assign({}, ...instructions.slice(0, stageStarts[0]).filter((i) => i.keyword === "ARG").map((i) => parseEnv(i.args))) as Record<string, string>;
    const withArgs = (text: string) => text.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, braced: string, bare: string) => args[braced ?? bare] ?? "");

    // The image's promises: the current Node LTS on Debian (bash for the host's login shells) as a
    // build argument's default, the same base for both stages, a non-root user, the port exposed.
    const base = withArgs(runtime[0]!.args.split(/\s+/)[0]!);
    expect(base).toBe("node:24-bookworm-slim");
    expect(withArgs(build[0]!.args.split(/\s+/)[0]!)).toBe(base);
    expect(runtime[0]!.args, "the base is chosen by a build argument").toMatch(/^\$/);
    expect(build.some((i) => i.keyword === "RUN" && /npm ci\b/.test(i.args) && !/--omit=dev/.test(i.args)), "the build stage installs dev dependencies").toBe(true);
    // The build stage's build: `npm run SCRIPT` (build, or build:cli for the bundle alone).
    const buildScript = build
      .filter((i) => i.keyword === "RUN")
      .flatMap((i) => i.args.split("&&").map((s) => s.trim()))
      .map((step) => /^npm run (build(?::cli)?)$/.exec(step)?.[1])
      .find((script) => script !== undefined);
    expect(buildScript, "the build stage runs npm run build or npm run build:cli").toBeDefined();
    const user = of("USER").at(-1)?.args;
    expect(user, "USER").toBeDefined();
    expect(["root", "0"]).not.toContain(user!.split(":")[0]);
    const env = Object.assign({}, ...of("ENV").map((i) => parseEnv(i.args))) as Record<string, string>;
    expect(env.TAU_GATEWAY_HOST).toBe("0.0.0.0");
    expect(of("EXPOSE").map((i) => i.args)).toContain(env.TAU_GATEWAY_PORT);
    const entrypoint = execForm(of("ENTRYPOINT").at(-1)!.args, "ENTRYPOINT");
    const cmd = execForm(of("CMD").at(-1)!.args, "CMD");
    const healthcheck = of("HEALTHCHECK").at(-1)!.args;
    const probe = execForm(healthcheck.slice(healthcheck.indexOf(" CMD ") + 1), "HEALTHCHECK CMD");
    // An init that reaps orphans is PID 1 and runs node; the image is the command line, `serve` by
    // default, so `docker run IMAGE validate …` and `docker run IMAGE --help` run those commands.
    expect(entrypoint.slice(0, 3)).toEqual(["tini", "--", "node"]);
    expect(of("RUN").some((i) => /apt-get install\b.*\btini\b/.test(i.args)), "tini is installed").toBe(true);
    expect(cmd).toEqual(["serve"]);
    // The image runs the command users install: the bundle package.json's `bin` names.
    const bin = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { bin: Record<string, string> }).bin["tau-gateway"];
    const workdir = workdirOf(runtime);
    const script = entrypoint[3]!;
    expect(posix.relative(workdir, posix.resolve(workdir, script))).toBe(posix.normalize(bin!));
    expect(probe[0]).toBe("node");

    // The image's file system, rooted in a temporary directory.
    const root = mkdtempSync(join(tmpdir(), "docker-runtime-"));
    temporary.push(root);
    const inRoot = (path: string) => join(root, path);
    const appDir = inRoot(workdir);
    mkdirSync(appDir, { recursive: true });

    // The build stage: what its `npm run SCRIPT` writes to dist/ (into our own copy, not the shared tree).
    const builtDist = join(root, ".build-stage-dist");
    const built = await run("npm", ["run", buildScript!, "--silent", "--", "--outDir", builtDist], { cwd: repoRoot });
    expect(built.code, `npm run ${buildScript} failed:\n${built.output}`).toBe(0);
    const buildWorkdir = workdirOf(build);
    // What the build stage removes from dist/ after building (the compiled library, source maps).
    for (const step of build.filter((i) => i.keyword === "RUN").flatMap((i) => i.args.split("&&").map((s) => s.trim()))) {
      const [program, ...words] = step.split(/\s+/);
      if (program === "rm") {
        for (const path of words.filter((w) => !w.startsWith("-"))) {
          expect(path, "the build stage removes only build output").toMatch(/^dist\//);
          rmSync(join(builtDist, path.slice("dist/".length)), { recursive: true, force: true });
        }
      } else if (program === "find") {
        expect(words, "find dist -name PATTERN -delete").toEqual(["dist", "-name", expect.any(String), "-delete"]);
        const suffix = words[2]!.replace(/^'|'$/g, "");
        expect(suffix, "a *.EXT pattern").toMatch(/^\*\.\w+$/);
        for (const file of readdirSync(builtDist, { recursive: true }) as string[]) if (file.endsWith(suffix.slice(1))) rmSync(join(builtDist, file));
      }
    }
    /** A path of the build stage's file system, as it exists here. */
    const fromBuildStage = (path: string) => {
      const relative = posix.relative(buildWorkdir, posix.resolve(buildWorkdir, path));
      return relative === "dist" || relative.startsWith("dist/") ? join(builtDist, relative.slice("dist".length)) : join(repoRoot, relative);
    };

    // COPY: exactly what the runtime stage copies, nothing else.
    for (const copy of of("COPY")) {
      const words = copy.args.split(/\s+/);
      const fromStage = words.find((w) => w.startsWith("--from="))?.slice("--from=".length);
      const paths = words.filter((w) => !w.startsWith("--"));
      const destination = paths.pop()!;
      const target = isAbsolute(destination) ? inRoot(destination) : join(appDir, destination);
      if (fromStage !== undefined) expect(fromStage).toBe(stageName(build));
      for (const source of paths) {
        const from = fromStage !== undefined ? fromBuildStage(source) : join(repoRoot, source);
        const into = destination.endsWith("/") ? join(target, basename(source)) : target;
        cpSync(from, into, { recursive: true });
      }
    }
    expect(existsSync(join(appDir, "src")), "sources are not copied").toBe(false);
    expect(existsSync(join(appDir, "test")), "tests are not copied").toBe(false);
    // Only what runs: not the compiled library nor source maps (they embed every source file).
    expect(existsSync(join(appDir, "dist/src")), "dist/src is not shipped").toBe(false);
    expect(existsSync(join(appDir, "dist/generated")), "dist/generated is not shipped").toBe(false);
    expect((readdirSync(join(appDir, "dist"), { recursive: true }) as string[]).filter((f) => f.endsWith(".map")), "no source maps").toEqual([]);

    // RUN: the dependency install (and the directories it creates); other commands do not change what runs.
    let installed = false;
    for (const step of of("RUN").flatMap((i) => i.args.split("&&").map((s) => s.trim()))) {
      const [program, ...args] = step.split(/\s+/);
      if (program === "npm" && args[0] === "ci") {
        expect(args, "the runtime stage installs production dependencies only").toContain("--omit=dev");
        const install = await run("npm", args, { cwd: appDir, env: { ...process.env, NODE_ENV: env.NODE_ENV ?? "production" } });
        if (install.code !== 0 && NETWORK_ERROR.test(install.output)) {
          throw new Error(`npm ci --omit=dev could not reach the npm registry; this test needs network access (or a warm npm cache):\n${install.output}`);
        }
        expect(install.code, `npm ${args.join(" ")} failed:\n${install.output}`).toBe(0);
        installed = true;
      } else if (program === "mkdir") {
        for (const dir of args.filter((a) => !a.startsWith("-"))) mkdirSync(inRoot(dir), { recursive: true });
      }
    }
    expect(installed, "the runtime stage runs npm ci").toBe(true);
    const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as { packages: Record<string, { dev?: boolean }> };
    const devOnly = Object.entries(lock.packages).filter(([path, p]) => path.startsWith("node_modules/") && p.dev);
    expect(devOnly.length).toBeGreaterThan(0);
    for (const [path] of devOnly) expect(existsSync(join(appDir, path)), `${path} is a dev dependency`).toBe(false);

    // Start it as the image would, with the image's environment (absolute paths inside the image
    // mapped into the root), a token as `docker run -e` would give, and a free port.
    const port = await freePort();
    const token = randomBytes(24).toString("hex");
    const home = inRoot("/home/node");
    mkdirSync(home, { recursive: true });
    const imageEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home };
    for (const [name, value] of Object.entries(env)) imageEnv[name] = value.startsWith("/") ? inRoot(value) : value;
    Object.assign(imageEnv, { TAU_GATEWAY_PORT: String(port), TAU_GATEWAY_TOKEN: token, TAU_GATEWAY_INSPECTOR: "true" });

    // tini's part (signals, reaping) needs the real image; here node runs the rest of the ENTRYPOINT.
    const program = [inRoot(posix.resolve(workdir, script)), ...entrypoint.slice(4), ...cmd];
    const child = spawn(process.execPath, program, { cwd: appDir, env: imageEnv, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let stderr = "";
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the image's CMD did not start listening; stderr:\n${stderr}`)), 30_000);
      child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
        if (stderr.includes(`tau-gateway listening on http://0.0.0.0:${port}`)) {
          clearTimeout(timer);
          resolve();
        }
      });
      void exit.then(({ code }) => {
        clearTimeout(timer);
        reject(new Error(`the image's CMD exited with ${code}; stderr:\n${stderr}`));
      });
    });

    const health = await run(process.execPath, probe.slice(1), { cwd: appDir, env: imageEnv });
    expect(health, "HEALTHCHECK").toMatchObject({ code: 0 });

    // The Ask surface works on production dependencies alone (the embedded host, the validators).
    const created = await fetch(`http://127.0.0.1:${port}/rpc`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/create", params: {} }),
    });
    expect(created.status).toBe(200);
    expect(await created.json()).toMatchObject({ id: 1, result: { session: { sessionId: expect.any(String) } } });

    // The inspector's page ships with the image, every file of it; the single token (not an
    // operator's) sees its own tenant's traffic: the POST /rpc above.
    const page = await fetch(`http://127.0.0.1:${port}/inspector`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("/inspector/static/app.js");
    for (const file of PAGE_FILES.filter((name) => name !== "index.html")) expect((await fetch(`http://127.0.0.1:${port}/inspector/static/${file}`)).status, file).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/inspector/api/connections`)).status).toBe(401);
    const listed = await fetch(`http://127.0.0.1:${port}/inspector/api/connections`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await listed.json()) as { connections: { tenant?: string; transport: string }[] }).connections).toContainEqual(expect.objectContaining({ tenant: "default", transport: "http POST /rpc" }));

    child.kill("SIGTERM");
    expect(await exit).toEqual({ code: 0, signal: null });
    // With the gateway gone the same probe reports unhealthy.
    expect(await run(process.execPath, probe.slice(1), { cwd: appDir, env: imageEnv })).toMatchObject({ code: 1 });
  });
});
