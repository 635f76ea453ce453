import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli } from "../../support/cli.js";

/**
 * `tau-gateway validate … | head`: the reader closes the pipe after the first line while the
 * report is still being written. The command stops quietly, as Unix filters do: no stack trace,
 * exit status 0.
 */


let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "validate-pipe-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Every line invalid, so the report is far larger than a pipe's buffer. */
const INVALID_LINE = JSON.stringify({ id: 1, method: "session/send", params: { sessionId: "s", content: 42 } });
const LINES = 20_000;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Runs `tau-gateway validate ARGS | head -n 1` with real processes and a real pipe between them;
 * `stdin`, when given, is written to the command and its stdin left open.
 */
async function validateIntoHead(args: string[], stdin?: string): Promise<{ validate: Exit; stderr: string; headOutput: string }> {
  const head = spawn("head", ["-n", "1"], { stdio: ["pipe", "pipe", "inherit"] });
  let headOutput = "";
  head.stdout.setEncoding("utf8").on("data", (d: string) => (headOutput += d));
  const headDone = new Promise((resolve) => head.once("close", resolve));
  const validate = spawnCli(["validate", ...args], {}, [stdin === undefined ? "ignore" : "pipe", head.stdin, "pipe"]);
  // The pipe's write end now belongs to validate alone.
  head.stdin.destroy();
  let stderr = "";
  validate.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  if (stdin !== undefined) {
    // Left open, as a producer that goes on would: the command must not wait for its end.
    validate.stdin!.on("error", () => undefined);
    validate.stdin!.write(stdin);
  }
  const exit = await new Promise<Exit>((resolve) => validate.once("close", (code, signal) => resolve({ code, signal })));
  validate.stdin?.destroy();
  await headDone;
  return { validate: exit, stderr, headOutput };
}

describe("tau-gateway validate into a reader that closes early", () => {
  it("stops quietly with status 0 when reading a file", async () => {
    const path = join(dir, "invalid.jsonl");
    await writeFile(path, `${INVALID_LINE}\n`.repeat(LINES));
    const r = await validateIntoHead([path]);
    expect(r.headOutput).toBe(`${path}:1: ask session/send: /params/content: must be of type string\n`);
    expect(r.stderr).toBe("");
    expect(r.validate).toEqual({ code: 0, signal: null });
  });

  it("stops quietly with status 0 when reading stdin, without waiting for the rest of it", async () => {
    const r = await validateIntoHead(["--format", "json", "-"], `${INVALID_LINE}\n`.repeat(LINES));
    expect(JSON.parse(r.headOutput)).toMatchObject({ file: "<stdin>", line: 1, pointer: "/params/content" });
    expect(r.stderr).toBe("");
    expect(r.validate).toEqual({ code: 0, signal: null });
  });
});
