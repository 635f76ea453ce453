import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";

/**
 * A client repository that has tau-gateway installed runs it through npm: `npx tau-gateway serve`,
 * or an npm script. npm runs it as `sh -c …` and passes a SIGTERM or SIGINT on to that shell
 * only; the shell dies of it and npm exits. The gateway must stop too, not stay behind holding its
 * port (src/cli/stop-signals.ts). The package here is the bundle this test run built, laid out as
 * an installed package (test/setup/built-cli.ts), in node_modules/ of a folder of its own.
 */

const cleanups = cleanupsAfterEach();
const LISTENING = /tau-gateway listening on http:\/\/127\.0\.0\.1:(\d+)/;

/** A client folder with tau-gateway in node_modules/ (and its bin linked), and a script that runs it. */
function clientFolder(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-npx-")));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const bundle = inject("cliBundle");
  // npm makes a package's bin executable when it installs it.
  chmodSync(bundle, 0o755);
  mkdirSync(join(dir, "node_modules/.bin"), { recursive: true });
  symlinkSync(dirname(dirname(bundle)), join(dir, "node_modules/tau-gateway"), "dir");
  symlinkSync("../tau-gateway/dist/tau-gateway.mjs", join(dir, "node_modules/.bin/tau-gateway"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "client", private: true, scripts: { gateway: "tau-gateway serve --port 0 --log-level warn" } }));
  return dir;
}

/** The pids of the processes whose command line names `dir` and runs tau-gateway (Linux's /proc). */
function gatewayPids(dir: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return argv[0]!.endsWith("node") && argv.some((arg) => arg.startsWith(dir) && arg.endsWith("tau-gateway"));
      } catch {
        return false;
      }
    })
    .map(Number);
}

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const portRefuses = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });

const npx = ["npx", "--no-install", "tau-gateway", "serve", "--port", "0", "--log-level", "warn"];
const npmRun = ["npm", "run", "--silent", "gateway"];

/**
 * To npm's process alone (`kill PID`, a CI step stopping what it started, a supervisor), or to its
 * whole process group, as a terminal's Ctrl-C sends it. A SIGINT to npm alone is not among them:
 * npm passes it to the shell, which waits for its command, so nothing reaches the gateway or ends
 * (docs/operations.md says so).
 */
const ways: Array<{ how: string; command: string[]; signal: NodeJS.Signals; to: "npm" | "group" }> = [
  { how: "npx tau-gateway serve", command: npx, signal: "SIGTERM", to: "npm" },
  { how: "npx tau-gateway serve", command: npx, signal: "SIGTERM", to: "group" },
  { how: "npx tau-gateway serve", command: npx, signal: "SIGINT", to: "group" },
  { how: "npm run (a script running tau-gateway serve)", command: npmRun, signal: "SIGTERM", to: "npm" },
  { how: "npm run (a script running tau-gateway serve)", command: npmRun, signal: "SIGINT", to: "group" },
];

describe.skipIf(!existsSync("/proc/self/cmdline"))("tau-gateway started through npm", () => {
  for (const { how, command, signal, to } of ways) {
    it(`${how}: ${signal} to ${to === "npm" ? "npm's process" : signal === "SIGINT" ? "its process group (Ctrl-C)" : "its whole process group"} stops the gateway, with no process left and its port free`, { timeout: 60_000 }, async () => {
      const dir = clientFolder();
      const npm = spawn(command[0]!, command.slice(1), { cwd: dir, stdio: ["ignore", "ignore", "pipe"], detached: true });
      const npmExit = new Promise<void>((resolve) => npm.once("exit", () => resolve()));
      cleanups.push(async () => {
        for (const pid of gatewayPids(dir)) process.kill(pid, "SIGKILL");
        if (npm.exitCode === null && npm.signalCode === null) npm.kill("SIGKILL");
      });
      let stderr = "";
      npm.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      await until(() => LISTENING.test(stderr), `the listening line; stderr:\n${stderr}`);
      const port = Number(LISTENING.exec(stderr)![1]);
      const [gateway, ...others] = gatewayPids(dir);
      expect(others, "one gateway process").toEqual([]);
      expect(gateway, "the gateway is a process of its own under npm").not.toBe(npm.pid);

      process.kill(to === "npm" ? npm.pid! : -npm.pid!, signal);
      await npmExit;
      await until(() => !alive(gateway!), `the gateway (pid ${gateway}) to exit; stderr:\n${stderr}`);
      expect(gatewayPids(dir)).toEqual([]);
      expect(await portRefuses(port), `port ${port} is free`).toBe(true);
      expect(stderr).not.toMatch(/"level":(50|60)/);
    });
  }
});
