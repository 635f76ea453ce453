import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { spawnCli } from "../../support/cli.js";

/**
 * `tau-gateway app-server` (Codex) and `tau-gateway acp` on stdio under the same bounds as the
 * Ask `stdio` command: a pipelined flood sent while stdout is not read is answered request by
 * request — or refused with -32013 past the in-flight limit — exactly once each; a line longer
 * than --max-message-bytes is skipped (ACP answers -32600 with id null; Codex answers nothing
 * without an id) and the connection goes on; the process exits 0 when stdin ends.
 */

const cleanups = cleanupsAfterEach();

interface Child {
  write(message: object | string): void;
  lines: Array<Record<string, any>>;
  waitFor(count: number, timeoutMs: number): Promise<void>;
  pauseStdout(): void;
  resumeStdout(): void;
  endInput(): void;
  exit: Promise<number | null>;
}

function spawnCommand(command: "acp" | "app-server", args: string[]): Child {
  const child = spawnCli([command, ...args]) as ChildProcessWithoutNullStreams;
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exit;
    }
  });
  child.stderr.resume();
  const lines: Array<Record<string, any>> = [];
  let partial = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    partial += chunk;
    const complete = partial.split("\n");
    partial = complete.pop()!;
    for (const line of complete) if (line.trim()) lines.push(JSON.parse(line));
  });
  return {
    write: (message) => void child.stdin.write(`${typeof message === "string" ? message : JSON.stringify(message)}\n`),
    lines,
    waitFor: async (count, timeoutMs) => {
      for (let waited = 0; lines.length < count; waited += 25) {
        if (waited > timeoutMs) throw new Error(`${lines.length} of ${count} lines within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    pauseStdout: () => void child.stdout.pause(),
    resumeStdout: () => void child.stdout.resume(),
    endInput: () => void child.stdin.end(),
    exit,
  };
}

const dialects = [
  {
    command: "app-server" as const,
    envelope: {},
    initialize: { method: "initialize", params: { clientInfo: { name: "bounds", version: "1" }, capabilities: null } },
    cheap: { method: "thread/list", params: {} },
    oversizedAnswered: false,
  },
  {
    command: "acp" as const,
    envelope: { jsonrpc: "2.0" },
    initialize: { method: "initialize", params: { protocolVersion: 1 } },
    cheap: { method: "session/list", params: {} },
    oversizedAnswered: true,
  },
];

describe.each(dialects)("tau-gateway $command on stdio", ({ command, envelope, initialize, cheap, oversizedAnswered }) => {
  it(
    "answers each of 5,000 pipelined requests exactly once (-32013 past the in-flight limit), skips an oversized line, and exits 0 when stdin ends",
    async () => {
      const FLOOD = 5_000;
      const child = spawnCommand(command, ["--max-inflight", "8", "--max-message-bytes", "4096"]);
      child.write({ ...envelope, id: "init", ...initialize });
      await child.waitFor(1, 60_000);
      expect(child.lines[0]).toMatchObject({ id: "init", result: expect.any(Object) });

      // A line over the bound, then a request that must still be answered.
      child.write(JSON.stringify({ ...envelope, id: "big", method: cheap.method, params: { padding: "x".repeat(8192) } }));
      child.write({ ...envelope, id: "after-big", ...cheap });
      await child.waitFor(oversizedAnswered ? 3 : 2, 30_000);
      const afterBig = child.lines.slice(1);
      expect(afterBig.find((line) => line.id === "after-big")).toMatchObject({ result: expect.any(Object) });
      expect(afterBig.some((line) => line.id === "big")).toBe(false);
      const refusals = afterBig.filter((line) => line.id === null);
      if (oversizedAnswered) {
        expect(refusals).toEqual([expect.objectContaining({ error: expect.objectContaining({ code: -32600, data: { limit: 4096 } }) })]);
      } else {
        expect(refusals).toEqual([]);
      }

      // The flood, written while the client does not read what comes back.
      const seen = child.lines.length;
      child.pauseStdout();
      let flood = "";
      for (let i = 0; i < FLOOD; i++) flood += `${JSON.stringify({ ...envelope, id: `f${i}`, ...cheap })}\n`;
      child.write(flood.slice(0, -1));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      child.resumeStdout();
      await child.waitFor(seen + FLOOD, 120_000);

      const answers = new Map<string, number>();
      const outcomes = new Map<string, number>();
      for (const line of child.lines.slice(seen)) {
        const id = String(line.id);
        answers.set(id, (answers.get(id) ?? 0) + 1);
        const outcome = "error" in line ? String(line.error.code) : "ok";
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
      expect(answers.size).toBe(FLOOD);
      expect([...answers.values()].every((count) => count === 1)).toBe(true);
      for (let i = 0; i < FLOOD; i++) expect(answers.has(`f${i}`)).toBe(true);
      expect(outcomes.get("ok")).toBeGreaterThan(0);
      expect([...outcomes.keys()].filter((outcome) => outcome !== "ok")).toEqual(outcomes.has("-32013") ? ["-32013"] : []);

      child.endInput();
      expect(await child.exit).toBe(0);
    },
    180_000,
  );
});
