import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { spawnAcpAgent } from "../../support/acp-process.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { spawnOwnedCli } from "../../support/cli.js";
import { answerInitialize, startFakeTauPeer, success } from "../../support/fake-tau-peer.js";

/**
 * The first SIGTERM stops `app-server` and `acp` whatever their parent does: also when it stopped
 * reading their stdout (their unread output used to hold the process for ever), and a request that
 * arrives while they drain is answered with the retryable refusal of a draining gateway (-32012,
 * `retryable: true`), never left unread or unanswered.
 */

const cleanups = cleanupsAfterEach();
const workDir = realpathSync(mkdtempSync(join(tmpdir(), "stdio-stop-")));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

const INITIALIZE = {
  "app-server": { jsonrpc: "2.0", id: 0, method: "initialize", params: { clientInfo: { name: "stop-test", version: "1" } } },
  acp: { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } },
} as const;

/** Answers of at least 8 KiB each (an unknown method is answered with an error naming it). */
const bulkyRequest = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, method: `unknown/${"x".repeat(8192)}` })}\n`;

/** Resolves once the recording at `path` holds `count` lines the command wrote (recorded as they are written to stdout). */
function recordedAnswers(path: string, count: number): Promise<void> {
  const answered = () => (existsSync(path) ? readFileSync(path, "utf8").split('"direction":"server"').length - 1 : 0);
  return new Promise((resolve) => {
    const watcher = watch(dirname(path), () => {
      if (answered() < count) return;
      watcher.close();
      resolve();
    });
    if (answered() >= count) {
      watcher.close();
      resolve();
    }
  });
}

describe("the first SIGTERM", () => {
  for (const command of ["app-server", "acp"] as const) {
    it(`stops ${command} when its parent stopped reading stdout`, async () => {
      const record = join(mkdtempSync(join(workDir, "record-")), "lines.jsonl");
      const { child: spawned, exit, stderr } = spawnOwnedCli([command, "--log-level", "info", "--record", record], cleanups, { TAU_GATEWAY_DEFAULT_CWD: workDir });
      const child = spawned as ChildProcessWithoutNullStreams;
      child.stdin.on("error", () => undefined);
      // Never read: the pipe holds 64 KiB, so once 16 answers of 8 KiB are written some are unread.
      child.stdout.pause();
      child.stdin.write(`${JSON.stringify(INITIALIZE[command])}\n`);
      for (let id = 1; id <= 200; id++) child.stdin.write(bulkyRequest(id));
      await recordedAnswers(record, 16);
      child.kill("SIGTERM");
      expect(await exit).toEqual({ code: 0, signal: null });
      expect(stderr()).toContain("stdout is not read: exiting without the output the parent left unread");
    }, 90_000);
  }

  it("acp answers a request that arrives while it drains with the retryable refusal, and still finishes the prompt in flight", async () => {
    const agent = spawnAcpAgent(["--drain-timeout", "60000", "--log-level", "info"], cleanups);
    agent.write(INITIALIZE.acp);
    agent.write({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: workDir, mcpServers: [] } });
    const { sessionId } = (await agent.next((m) => m.id === 1)).result;
    agent.write({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "/bash echo started\n/sleep 60000" }] } });
    await agent.next((m) => m.params?.update?.sessionUpdate === "tool_call_update");
    agent.child.kill("SIGTERM");
    await agent.next(() => agent.stderr().includes('"msg":"stopping'), 20_000);
    agent.write({ jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd: workDir, mcpServers: [] } });
    expect(await agent.next((m) => m.id === 3)).toMatchObject({ id: 3, error: { code: -32012, data: { reason: "draining", retryable: true } } });
    // The prompt in flight goes on: the editor cancels it, and hears its end.
    agent.write({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    expect(await agent.next((m) => m.id === 2)).toEqual({ jsonrpc: "2.0", id: 2, result: { stopReason: "cancelled" } });
    expect(await agent.exit).toEqual({ code: 0, signal: null });
  }, 90_000);

  it("app-server answers a request that arrives while it drains with the retryable refusal; a second signal stops the wait", async () => {
    const lines: any[] = [];
    const waiters = new Set<() => void>();
    const wake = () => {
      for (const w of [...waiters]) w();
    };
    // A Tau host that never answers session.create: thread/start stays in flight, so the drain waits for it.
    const peer = await startFakeTauPeer({
      onRequest: (request, socket) => {
        setImmediate(wake);
        if (answerInitialize(request, socket)) return;
        if (request.method === "session.list") socket.send(success(request.id, { sessions: [] }));
      },
    });
    cleanups.push(() => peer.close());
    const { child: spawned, exit, stderr } = spawnOwnedCli(["app-server", "--upstream", peer.url, "--drain-timeout", "600000", "--log-level", "info"], cleanups, { TAU_GATEWAY_DEFAULT_CWD: workDir });
    const child = spawned as ChildProcessWithoutNullStreams;
    createInterface({ input: child.stdout }).on("line", (line) => {
      lines.push(JSON.parse(line));
      wake();
    });
    child.stderr!.on("data", wake);
    const until = <T>(found: () => T | undefined) =>
      new Promise<T>((resolve) => {
        const check = () => {
          const value = found();
          if (value === undefined) return;
          waiters.delete(check);
          resolve(value);
        };
        waiters.add(check);
        check();
      });
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send(INITIALIZE["app-server"]);
    await until(() => lines.find((m) => m.id === 0));
    send({ jsonrpc: "2.0", id: 1, method: "thread/start", params: {} });
    await until(() => peer.received.find((text) => text.includes('"session.create"')));
    child.kill("SIGTERM");
    await until(() => (stderr().includes('"msg":"stopping') ? true : undefined));
    send({ jsonrpc: "2.0", id: 2, method: "thread/list", params: {} });
    expect(await until(() => lines.find((m) => m.id === 2))).toMatchObject({ id: 2, error: { code: -32012, data: { reason: "draining", retryable: true } } });
    // The drain would wait ten minutes for thread/start: a second signal stops the wait.
    child.kill("SIGTERM");
    expect(await exit).toEqual({ code: 0, signal: null });
  }, 90_000);
});
