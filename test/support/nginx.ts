import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { docBlock } from "./docs.js";

/** The nginx binary, when installed (`.ci/run` installs it with apt-get; suites skip without it). */
export const nginxBinary = ["nginx", "/usr/sbin/nginx"].find((candidate) => spawnSync(candidate, ["-v"]).status === 0);

/** The documented nginx example, which users copy: the one ```nginx block of docs/deployment.md. */
export function nginxExample(): string {
  return `${docBlock("docs/deployment.md", "# tau-gateway behind nginx")}\n`;
}

/** The example's `listen 80 …;` line moved to 127.0.0.1:PORT (its parameters, e.g. default_server, kept). */
export function listeningOn(site: string, port: number | string): string {
  const moved = site.replace(/^(\s*)listen 80((?: \w+)*);$/m, `$1listen 127.0.0.1:${port}$2;`);
  expect(moved, "the example's listen line").not.toBe(site);
  return moved;
}

/** Temporary directories nginx writes request bodies and proxied data to. */
const TEMP_PATHS = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"];

export interface TestNginx {
  /** `http://127.0.0.1:PORT`, the site's listen address. */
  base: string;
  stop(): Promise<void>;
}

/**
 * A real nginx serving `site` (a `server` block, with the `upstream` blocks it needs, listening on
 * 127.0.0.1:PORT), its configuration, pid, logs and temporary files in a directory of its own;
 * resolves once `/healthz` answers through it.
 */
export async function startTestNginx(site: string): Promise<TestNginx> {
  const port = /listen 127\.0\.0\.1:(\d+)[ ;]/.exec(site)?.[1];
  if (!port) throw new Error("the site listens on no 127.0.0.1 port");
  const dir = mkdtempSync(join(tmpdir(), "nginx-"));
  // Worker processes may run as another user: they need to reach the temporary directories.
  chmodSync(dir, 0o755);
  for (const sub of TEMP_PATHS) {
    mkdirSync(join(dir, sub));
    chmodSync(join(dir, sub), 0o777);
  }
  writeFileSync(
    join(dir, "nginx.conf"),
    [
      "daemon off;",
      "worker_processes 1;",
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log info;`,
      "events { worker_connections 256; }",
      "http {",
      `  access_log ${dir}/access.log;`,
      ...TEMP_PATHS.map((sub) => `  ${sub}_temp_path ${dir}/${sub};`),
      site,
      "}",
      "",
    ].join("\n"),
  );
  const nginx = spawn(nginxBinary!, ["-e", `${dir}/error.log`, "-p", dir, "-c", `${dir}/nginx.conf`], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  nginx.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  nginx.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise((resolve) => nginx.once("exit", resolve));
  const stop = async () => {
    if (nginx.exitCode === null && nginx.signalCode === null) {
      nginx.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let attempt = 0; ; attempt++) {
      if (nginx.exitCode !== null) throw new Error(`nginx exited with ${nginx.exitCode}: ${output}\n${readFileSync(`${dir}/error.log`, "utf8")}`);
      const ok = await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (attempt > 200) throw new Error(`nginx did not start serving: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { base, stop };
}
