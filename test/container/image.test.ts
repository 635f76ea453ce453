import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AskTestClient } from "../support/ask-client.js";
import { CodexTestClient } from "../support/codex-client.js";
import { docBlock } from "../support/docs.js";
import { freePort } from "../support/free-port.js";
import { listeningOn, nginxExample } from "../support/nginx.js";
import { openStalledWebSocket } from "../support/stalled-websocket.js";
import { TauTestClient } from "../support/tau-client.js";

/**
 * The real image in a real Docker engine (test/container/run.sh builds it and sets
 * TAU_GATEWAY_IMAGE; without it this suite is skipped): the CLI as the image's command, every
 * surface directly and behind Debian's stock nginx configured as docs/deployment.md says,
 * as uid 1000 on a read-only root with a workspace volume owned by uid 1000, `docker stop` with a
 * turn in flight and with a client that never answers the close frame (exit 0, not SIGKILL's 137),
 * and tini reaping what agent commands leave behind.
 *
 * The engine runs without a bridge (as CI starts it), so containers share the host's network and
 * each listens on a free port of its own.
 */

const IMAGE = process.env.TAU_GATEWAY_IMAGE;
/** A Debian image with apt, for the nginx container (default: the image's own base). */
const DEBIAN_IMAGE = process.env.TAU_GATEWAY_BASE_IMAGE ?? "node:24-bookworm-slim";
const TOKEN = randomBytes(16).toString("hex");
const bearer = { authorization: `Bearer ${TOKEN}` };
const prefix = `tau-gateway-test-${process.pid}`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function docker(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn("docker", args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function dockerOk(args: string[]): Promise<string> {
  const run = await docker(args);
  if (run.code !== 0) throw new Error(`docker ${args.join(" ")} exited with ${run.code}:\n${run.stdout}\n${run.stderr}`);
  return run.stdout.trim();
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const containers: string[] = [];
const images: string[] = [];
const temporary: string[] = [];
let counter = 0;

interface Gateway {
  name: string;
  base: string;
  ws: string;
  workspace: string;
}

/** The image as docs/deployment.md runs it: read-only, uid 1000, a workspace owned by uid 1000, a token, nginx trusted. */
async function startGateway(): Promise<Gateway> {
  const name = `${prefix}-gw-${++counter}`;
  const port = await freePort();
  const workspace = mkdtempSync(join(tmpdir(), "tau-gateway-workspace-"));
  temporary.push(workspace);
  // The volume ownership step: uid 1000 is the image's `node` user.
  chownSync(workspace, 1000, 1000);
  containers.push(name);
  await dockerOk([
    "run", "-d", "--name", name, "--network", "host", "--read-only", "--user", "1000:1000",
    "-v", `${workspace}:/workspace`,
    "-e", `TAU_GATEWAY_PORT=${port}`, "-e", `TAU_GATEWAY_TOKEN=${TOKEN}`, "-e", "TAU_GATEWAY_TRUST_PROXY=127.0.0.1",
    IMAGE!,
  ]);
  const base = `http://127.0.0.1:${port}`;
  await waitUntil(async () => (await fetch(`${base}/readyz`)).ok, `${name} to be ready`);
  return { name, base, ws: base.replace("http://", "ws://"), workspace };
}

/** `docker stop` (its default 10 s before SIGKILL), then the container's exit code and its log. */
/** An Ask client on `ws`/rpc, subscribed to a session it created; its socket is closed if that fails. */
async function askOnNewSession(ws: string): Promise<{ ask: AskTestClient & { socket: import("ws").WebSocket }; sessionId: string }> {
  const ask = await AskTestClient.websocket(`${ws}/rpc`, { headers: bearer });
  try {
    const sessionId = (await ask.request("session/create", {})).session.sessionId as string;
    await ask.request("session/subscribe", { sessionId });
    return { ask, sessionId };
  } catch (err) {
    ask.socket.terminate();
    throw err;
  }
}

async function stopContainer(name: string): Promise<{ exitCode: number; logs: string }> {
  await dockerOk(["stop", name]);
  const exitCode = Number(await dockerOk(["inspect", "--format", "{{.State.ExitCode}}", name]));
  const logs = await docker(["logs", name]);
  return { exitCode, logs: logs.stdout + logs.stderr };
}

/** Debian's nginx in a container, set up with the steps and the block of docs/deployment.md (only its ports changed). */
async function startNginx(gatewayPort: string): Promise<string> {
  const steps = `${docBlock("docs/deployment.md", "sudo cp tau-gateway.conf")}\n`;
  const port = await freePort();
  const site = listeningOn(nginxExample(), port).replace(/server 127\.0\.0\.1:8080;/, `server 127.0.0.1:${gatewayPort};`);
  expect(site).toContain(`listen 127.0.0.1:${port} default_server;`);
  expect(site).toContain(`server 127.0.0.1:${gatewayPort};`);

  const context = mkdtempSync(join(tmpdir(), "tau-gateway-nginx-"));
  temporary.push(context);
  writeFileSync(join(context, "tau-gateway.conf"), site);
  // The documented steps as they are, but for sudo (the build runs as root) and the reload (no nginx runs yet).
  const install = steps!
    .trim()
    .split("\n")
    .map((line) => line.replace(/\bsudo /g, "").replace(/ && systemctl reload nginx$/, ""));
  writeFileSync(
    join(context, "Dockerfile"),
    [
      `FROM ${DEBIAN_IMAGE}`,
      "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx && rm -rf /var/lib/apt/lists/*",
      "WORKDIR /root",
      "COPY tau-gateway.conf ./",
      ...install.map((line) => `RUN ${line}`),
      'ENTRYPOINT []',
      'CMD ["nginx", "-g", "daemon off;"]',
      "",
    ].join("\n"),
  );
  const tag = `${prefix}-nginx:latest`;
  images.push(tag);
  await dockerOk(["build", "--network", "host", "-q", "-t", tag, context]);
  const name = `${prefix}-nginx`;
  containers.push(name);
  await dockerOk(["run", "-d", "--name", name, "--network", "host", tag]);
  const base = `http://127.0.0.1:${port}`;
  await waitUntil(async () => (await fetch(`${base}/healthz`)).ok, "nginx to serve /healthz");
  return base;
}

afterAll(async () => {
  for (const name of containers) await docker(["rm", "-f", name]);
  for (const tag of images) await docker(["image", "rm", "-f", tag]);
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!IMAGE)(`the container image ${IMAGE ?? "(skipped: TAU_GATEWAY_IMAGE is not set; test/container/run.sh builds the image and sets it)"}`, () => {
  it("is the command line: --help, serve --help and validate run as the image's command", async () => {
    const help = await docker(["run", "--rm", "--network", "none", IMAGE!, "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: tau-gateway <command>/);
    const serveHelp = await docker(["run", "--rm", "--network", "none", IMAGE!, "serve", "--help"]);
    expect(serveHelp.code).toBe(0);
    expect(serveHelp.stdout).toContain("--drain-timeout MS");

    const data = mkdtempSync(join(tmpdir(), "tau-gateway-validate-"));
    temporary.push(data);
    chmodSync(data, 0o755);
    writeFileSync(join(data, "good.jsonl"), '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    writeFileSync(join(data, "bad.jsonl"), '{"jsonrpc":"2.0","id":1,"method":"session/send","params":{}}\n');
    const good = await docker(["run", "--rm", "--network", "none", "--read-only", "-v", `${data}:/data:ro`, IMAGE!, "validate", "/data/good.jsonl"]);
    expect(good).toMatchObject({ code: 0, stdout: "1 valid, 0 invalid\n" });
    const bad = await docker(["run", "--rm", "--network", "none", "--read-only", "-v", `${data}:/data:ro`, IMAGE!, "validate", "/data/bad.jsonl"]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain("/params/sessionId: is required");
  });

  describe("serving, as uid 1000 on a read-only root filesystem", () => {
    let gateway: Gateway;
    let viaNginx: string;

    beforeAll(async () => {
      gateway = await startGateway();
      viaNginx = await startNginx(new URL(gateway.base).port);
    }, 600_000);

    it("runs as uid 1000 under tini", async () => {
      const status = await dockerOk(["exec", gateway.name, "cat", "/proc/1/status", "/proc/self/status"]);
      expect(status).toMatch(/^Name:\ttini$/m);
      expect([...status.matchAll(/^Uid:\t(\d+)/gm)].map((m) => m[1])).toEqual(["1000", "1000"]);
      const readOnly = await docker(["exec", gateway.name, "touch", "/app/x"]);
      expect(readOnly.code).not.toBe(0);
    });

    for (const route of ["directly", "through nginx"] as const) {
      it(`serves the HTTP routes ${route}`, async () => {
        const base = route === "directly" ? gateway.base : viaNginx;
        expect((await fetch(`${base}/healthz`)).status).toBe(200);
        expect((await fetch(`${base}/readyz`)).status).toBe(200);
        expect((await fetch(`${base}/metrics`)).status).toBe(401);
        const metrics = await fetch(`${base}/metrics`, { headers: bearer });
        expect(metrics.status).toBe(200);
        expect(await metrics.text()).toContain("tau_gateway_connections");
        const schema = await fetch(`${base}/schema`, { headers: bearer });
        expect(schema.status).toBe(200);
        const ping = await fetch(`${base}/rpc`, { method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
        expect(await ping.json()).toMatchObject({ id: 1, result: { status: "ok" } });
        // Behind nginx the gateway takes nginx's request id ($request_id: 32 hex digits); directly it makes a UUID.
        expect(ping.headers.get("x-request-id")).toMatch(route === "directly" ? /^[0-9a-f-]{36}$/ : /^[0-9a-f]{32}$/);
      });

      it(`carries an Ask turn whose command writes into the workspace, a /tau client and a Codex turn ${route}`, async () => {
        const ws = (route === "directly" ? gateway.base : viaNginx).replace("http://", "ws://");
        const { ask, sessionId } = await askOnNewSession(ws);
        try {
          const file = `written-${route.replace(/\W/g, "-")}.txt`;
          await ask.request("session/send", { sessionId, content: `/bash echo by-the-agent > ${file}\ndone` });
          const completed = await ask.waitForEvent(sessionId, "turn.completed");
          expect((completed.payload as { response: string }).response).toMatch(/^You said: done\b/);
          expect(readFileSync(join(gateway.workspace, file), "utf8")).toBe("by-the-agent\n");
          expect(statSync(join(gateway.workspace, file)).uid).toBe(1000);
        } finally {
          ask.socket.terminate();
        }

        const tau = await TauTestClient.connect(`${ws}/tau?access_token=${TOKEN}`);
        try {
          expect(tau.ready.version).toBe(18);
          await tau.initialize();
          expect(await tau.call("session.list", {})).toMatchObject({ sessions: expect.any(Array) });
        } finally {
          await tau.close();
        }

        const codex = await CodexTestClient.websocket(`${ws}/`, bearer);
        try {
          await codex.initialize();
          const { thread } = await codex.request("thread/start", {});
          const { completed } = await codex.turn(thread.id, "hello from codex");
          expect(completed.params.turn).toMatchObject({ status: "completed", error: null });
          expect(codex.invalid).toEqual([]);
        } finally {
          codex.socket.terminate();
        }
      });
    }
  });

  it("reaps what an agent command leaves running: no zombie stays once it ends", async () => {
    const gateway = await startGateway();
    const { ask, sessionId } = await askOnNewSession(gateway.ws);
    try {
      // The subshell exits at once: its `sleep` (holding none of the command's output open) is
      // orphaned and handed to PID 1, and outlives the command.
      await ask.request("session/send", { sessionId, content: "/bash (sleep 4 </dev/null >/dev/null 2>&1 &) ; echo spawned\ndone" });
      await ask.waitForEvent(sessionId, "turn.completed");
    } finally {
      ask.socket.terminate();
    }
    const processes = async () => (await dockerOk(["exec", gateway.name, "sh", "-c", "cat /proc/[0-9]*/stat 2>/dev/null"])).split("\n");
    // The orphan is there while it sleeps (the check sees it at all), then gone, not left a zombie.
    expect((await processes()).some((line) => line.includes("(sleep)"))).toBe(true);
    await waitUntil(async () => !(await processes()).some((line) => line.includes("(sleep)")), "the orphaned sleep to be reaped", 20_000).catch(async (err: Error) => {
      throw new Error(`${err.message}; processes:\n${(await processes()).join("\n")}`);
    });
    expect((await processes()).filter((line) => / Z /.test(line))).toEqual([]);
  });

  it("docker stop with a turn in flight: the turn finishes, every client sees it, exit 0", async () => {
    const gateway = await startGateway();
    const { ask, sessionId } = await askOnNewSession(gateway.ws);
    try {
      const sent = await ask.request("session/send", { sessionId, content: "/sleep 3000\nslept" });
      await ask.waitForEvent(sessionId, "turn.started");
      const closed = new Promise<number>((resolve) => ask.socket.once("close", (code) => resolve(code)));
      const stopped = await stopContainer(gateway.name);
      expect(stopped.exitCode, stopped.logs).toBe(0);
      expect(ask.eventsOf(sessionId).find((e) => e.type === "turn.completed" && (e.payload as { turnId?: string }).turnId === sent.turnId)?.payload).toMatchObject({ response: "You said: slept" });
      expect(await closed).toBe(1001);
      expect(stopped.logs).toMatch(/"drained":true/);
    } finally {
      ask.socket.terminate();
    }
  });

  it("docker stop with a client that never answers the close frame and a turn that outlasts the drain: exit 0, not 137", async () => {
    const gateway = await startGateway();
    const silent = await openStalledWebSocket(`${gateway.ws}/rpc`, bearer);
    const { ask, sessionId } = await askOnNewSession(gateway.ws);
    try {
      await ask.request("session/send", { sessionId, content: "/sleep 120000\nnever gets here" });
      await ask.waitForEvent(sessionId, "turn.started");
      const stopped = await stopContainer(gateway.name);
      expect(stopped.exitCode, stopped.logs).toBe(0);
      expect(stopped.logs).toMatch(/"drained":false/);
      await silent.ended();
    } finally {
      ask.socket.terminate();
      silent.socket.destroy();
    }
  });
});
