import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";
import { sleep } from "./stats.js";

/**
 * nginx as a plain WebSocket reverse proxy in front of the Tau host: the baseline a user would
 * otherwise deploy. Everything it writes (pid, logs, temp files) stays in a temporary directory;
 * one worker process, like the single-threaded gateway.
 */

export interface RunningNginx {
  url: string;
  version: string;
  pid: number;
  stop(): Promise<void>;
}

/** The nginx binary on PATH, or undefined (the nginx rows are then skipped with a note). */
export function findNginx(): string | undefined {
  try {
    return execFileSync("sh", ["-c", "command -v nginx"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

export async function startNginx(binary: string, upstreamPort: number): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), "tau-bench-nginx-"));
  for (const sub of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, sub));
  const port = await freePort();
  const conf = join(dir, "nginx.conf");
  writeFileSync(conf, config(dir, port, upstreamPort));
  // `nginx -v` writes its version to stderr.
  const version = spawnSync(binary, ["-v"], { encoding: "utf8" }).stderr.trim().replace(/^nginx version:\s*/, "");
  const child = spawn(binary, ["-p", dir, "-c", conf, "-e", join(dir, "error.log")], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  let exited = false;
  const gone = new Promise<void>((resolve) => child.once("exit", () => ((exited = true), resolve())));

  // nginx says nothing once it listens: poll the port.
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (exited || Date.now() > deadline) {
      child.kill("SIGKILL");
      const log = safeRead(join(dir, "error.log"));
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`nginx did not start: ${stderr.trim() || log.trim() || "no output"}`);
    }
    await sleep(20);
  }
  return {
    url: `ws://127.0.0.1:${port}/`,
    version,
    pid: child.pid!,
    async stop() {
      if (!exited) {
        // SIGQUIT is nginx's graceful stop; SIGTERM its fast one, which is all a benchmark needs.
        child.kill("SIGTERM");
        const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
        await gone;
        clearTimeout(killer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function config(dir: string, port: number, upstreamPort: number): string {
  return `daemon off;
master_process on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  map $http_upgrade $connection_upgrade { default upgrade; '' close; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://127.0.0.1:${upstreamPort};
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      proxy_buffering off;
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
    }
  }
}
`;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
