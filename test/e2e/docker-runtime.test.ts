import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, isAbsolute, join, posix } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { freePort } from "../support/free-port.js";

/**
 * No Docker engine exists here, so this reproduces the Dockerfile's runtime stage by hand, reading
 * every step from the Dockerfile itself (a change there changes what runs here): the build stage's
 * output (`npm run build`), a clean directory holding only what the runtime stage COPYs, its
 * `npm ci --omit=dev` (production dependencies only), then the image's CMD with the image's ENV,
 * the HEALTHCHECK command against it, and SIGTERM. Slow (a real npm install), so one test.
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
  it("installs production dependencies only, starts with the image's CMD and ENV, passes its HEALTHCHECK, and exits 0 on SIGTERM", { timeout: 300_000 }, async () => {
    const instructions = parseDockerfile(readFileSync(join(repoRoot, "Dockerfile"), "utf8"));
    const stageStarts = instructions.flatMap((ins, i) => (ins.keyword === "FROM" ? [i] : []));
    expect(stageStarts.length, "a multi-stage build").toBeGreaterThanOrEqual(2);
    const stages = stageStarts.map((start, i) => instructions.slice(start, stageStarts[i + 1]));
    const stageName = (stage: Instruction[]) => /\bAS\s+(\S+)/i.exec(stage[0]!.args)?.[1];
    const workdirOf = (stage: Instruction[]) => stage.filter((i) => i.keyword === "WORKDIR").at(-1)?.args ?? "/";
    const runtime = stages.at(-1)!;
    const build = stages[0]!;
    const of = (keyword: string) => runtime.filter((i) => i.keyword === keyword);

    // The image's promises: a small Node 20 base with bash, a non-root user, the port exposed.
    const base = runtime[0]!.args.split(/\s+/)[0]!;
    expect(base).toMatch(/^node:20-(bookworm-slim|alpine)/);
    expect(build.some((i) => i.keyword === "RUN" && /npm ci\b/.test(i.args) && !/--omit=dev/.test(i.args)), "the build stage installs dev dependencies").toBe(true);
    expect(build.some((i) => i.keyword === "RUN" && /npm run build/.test(i.args)), "the build stage builds").toBe(true);
    const user = of("USER").at(-1)?.args;
    expect(user, "USER").toBeDefined();
    expect(["root", "0"]).not.toContain(user!.split(":")[0]);
    const env = Object.assign({}, ...of("ENV").map((i) => parseEnv(i.args))) as Record<string, string>;
    expect(env.TAU_GATEWAY_HOST).toBe("0.0.0.0");
    expect(of("EXPOSE").map((i) => i.args)).toContain(env.TAU_GATEWAY_PORT);
    const cmd = execForm(of("CMD").at(-1)!.args, "CMD");
    const healthcheck = of("HEALTHCHECK").at(-1)!.args;
    const probe = execForm(healthcheck.slice(healthcheck.indexOf(" CMD ") + 1), "HEALTHCHECK CMD");
    expect(cmd[0]).toBe("node");
    // The image runs the command users install: the bundle package.json's `bin` names.
    const bin = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { bin: Record<string, string> }).bin["tau-gateway"];
    expect(posix.normalize(cmd[1]!)).toBe(posix.normalize(bin!));
    expect(probe[0]).toBe("node");

    // The image's file system, rooted in a temporary directory.
    const root = mkdtempSync(join(tmpdir(), "docker-runtime-"));
    temporary.push(root);
    const inRoot = (path: string) => join(root, path);
    const workdir = workdirOf(runtime);
    const appDir = inRoot(workdir);
    mkdirSync(appDir, { recursive: true });

    // The build stage: what `npm run build` writes to dist/ (into our own copy, not the shared tree).
    const builtDist = join(root, ".build-stage-dist");
    const built = await run("npm", ["run", "build", "--silent", "--", "--outDir", builtDist], { cwd: repoRoot });
    expect(built.code, `npm run build failed:\n${built.output}`).toBe(0);
    const buildWorkdir = workdirOf(build);
    /** A path of the build stage's file system, as it exists here. */
    const fromBuildStage = (path: string) => {
      const relative = posix.relative(buildWorkdir, posix.resolve(buildWorkdir, path));
      return relative === "dist" ? builtDist : join(repoRoot, relative);
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
    Object.assign(imageEnv, { TAU_GATEWAY_PORT: String(port), TAU_GATEWAY_TOKEN: token });

    const child = spawn(process.execPath, cmd.slice(1), { cwd: appDir, env: imageEnv, stdio: ["ignore", "pipe", "pipe"] });
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

    child.kill("SIGTERM");
    expect(await exit).toEqual({ code: 0, signal: null });
    // With the gateway gone the same probe reports unhealthy.
    expect(await run(process.execPath, probe.slice(1), { cwd: appDir, env: imageEnv })).toMatchObject({ code: 1 });
  });
});
