import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runExec, type ExecSpec } from "../../../src/host/exec-runner.js";

let dir: string;

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "exec-runner-")));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const run = (spec: Omit<ExecSpec, "cwd"> & { cwd?: string }, signal?: AbortSignal) => runExec({ cwd: dir, ...spec }, signal);

/** Resolves once `pid` no longer exists; the test times out if it never goes away. */
async function processGone(pid: number): Promise<void> {
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("runExec", () => {
  it("returns exit code 0 with stdout, stderr and their interleaving", async () => {
    const result = await run({ command: "for i in 1 2 3; do echo out$i; echo err$i >&2; done" });
    expect(result).toMatchObject({
      stdout: "out1\nout2\nout3\n",
      stderr: "err1\nerr2\nerr3\n",
      exitCode: 0,
      truncated: false,
      timedOut: false,
      aborted: false,
      closeSignal: null,
    });
    // Arrival order between two pipes is up to the scheduler; each stream keeps its own order.
    const lines = result.output.split("\n").filter(Boolean);
    expect(lines).toHaveLength(6);
    expect(lines.filter((l) => l.startsWith("out")).join(",")).toBe("out1,out2,out3");
    expect(lines.filter((l) => l.startsWith("err")).join(",")).toBe("err1,err2,err3");
  });

  it("reports a non-zero exit code", async () => {
    const result = await run({ command: "echo failing >&2; exit 3" });
    expect(result).toMatchObject({ exitCode: 3, closeSignal: null, stderr: "failing\n", output: "failing\n", stdout: "" });
  });

  it("reports the signal that killed the shell", async () => {
    const result = await run({ command: "kill -KILL $$" });
    expect(result).toMatchObject({ exitCode: null, closeSignal: "SIGKILL", timedOut: false, aborted: false });
  });

  it("passes args as $0 and $@ without interpolating them", async () => {
    const tricky = ["a b", `it's "quoted"`, "$HOME", "`id`", "$(echo no)", "*", ""];
    const result = await run({ command: 'exec "$0" "$@"', args: ["printf", "[%s]", ...tricky] });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(tricky.map((a) => `[${a}]`).join(""));

    const counted = await run({ command: 'echo "$0"; echo "$#"; echo "$1"', args: ["zero", "one two"] });
    expect(counted.stdout).toBe("zero\n1\none two\n");
  });

  it("adds env vars to the host environment but never overrides HOME", async () => {
    const result = await run({
      command: 'echo "$EXEC_RUNNER_VAR"; echo "$HOME"; echo "$PATH"',
      env: { EXEC_RUNNER_VAR: "value with spaces", HOME: "/not/the/home" },
    });
    const [value, home, path] = result.stdout.split("\n");
    expect(value).toBe("value with spaces");
    expect(home).toBe(process.env.HOME);
    expect(path.length).toBeGreaterThan(0);
  });

  it("feeds stdin bytes, and an empty stdin when none is given", async () => {
    const text = "héllo\nwörld\n";
    expect((await run({ command: "cat", stdin: Buffer.from(text) })).stdout).toBe(text);

    const big = Buffer.alloc(300_000, 0x61);
    expect((await run({ command: "wc -c", stdin: big })).stdout.trim()).toBe("300000");

    expect(await run({ command: "cat; echo end" })).toMatchObject({ stdout: "end\n", exitCode: 0 });
  });

  it("tolerates a command that ignores its stdin", async () => {
    const result = await run({ command: "exit 0", stdin: Buffer.alloc(4 * 1024 * 1024, 0x62) });
    expect(result.exitCode).toBe(0);
  });

  it("runs in cwd", async () => {
    expect((await run({ command: "pwd -P" })).stdout).toBe(`${dir}\n`);
  });

  it("runs a non-interactive login shell", async () => {
    const result = await run({ command: "shopt -q login_shell && echo login; [[ $- == *i* ]] && echo interactive; true" });
    expect(result.stdout).toBe("login\n");
  });

  it("kills the whole process group on timeout", async () => {
    // Long enough for the shell to start the background job on a loaded machine.
    const result = await run({ command: "sleep 30 & echo $!; sleep 30; wait", timeoutMs: 2000 });
    expect(result).toMatchObject({ timedOut: true, aborted: false, exitCode: null, closeSignal: "SIGTERM" });
    const background = Number(result.stdout.trim());
    expect(background).toBeGreaterThan(0);
    await processGone(background);
  });

  it("kills the process group when aborted", async () => {
    const controller = new AbortController();
    const pending = run({ command: "sleep 30 & echo $!; sleep 30; wait" }, controller.signal);
    setTimeout(() => controller.abort(), 200);
    const result = await pending;
    expect(result).toMatchObject({ aborted: true, timedOut: false, exitCode: null });
    expect(result.closeSignal).not.toBeNull();
    const background = Number(result.stdout.trim());
    if (background > 0) await processGone(background);
  });

  it("does not start when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await run({ command: "touch started" }, controller.signal)).toMatchObject({ aborted: true, exitCode: null, output: "" });
    expect((await run({ command: "test -e started && echo yes || echo no" })).stdout).toBe("no\n");
  });

  it("truncates at maxCaptureBytes and keeps draining the child", async () => {
    const result = await run({ command: "head -c 5000000 /dev/zero | tr '\\0' x; echo tail >&2; exit 7", maxCaptureBytes: 1000 });
    expect(result.truncated).toBe(true);
    expect(result.exitCode).toBe(7); // the writer was never blocked by a full pipe
    expect(result.stdout).toBe("x".repeat(1000));
    expect(result.stderr).toBe("");
    expect(result.output).toBe(result.stdout);
  });

  it("shares one capture budget between stdout and stderr", async () => {
    const result = await run({ command: "printf 12345; printf abcdefgh >&2", maxCaptureBytes: 8 });
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.stdout) + Buffer.byteLength(result.stderr)).toBe(8);
    expect(result.output.length).toBe(8);
  });

  it("is not truncated when the output fits exactly", async () => {
    const result = await run({ command: "printf 12345678", maxCaptureBytes: 8 });
    expect(result).toMatchObject({ stdout: "12345678", truncated: false });
  });

  it("decodes multi-byte characters split across chunks", async () => {
    const line = "é€😀";
    const result = await run({ command: `yes '${line}' | head -n 30000` });
    expect(result.truncated).toBe(false);
    expect(result.stdout).toBe(`${line}\n`.repeat(30000));
    expect(result.output).toBe(result.stdout);
  });

  it("drops a character cut in half by the capture budget", async () => {
    const result = await run({ command: "printf '😀😀'", maxCaptureBytes: 6 });
    expect(result).toMatchObject({ stdout: "😀", output: "😀", truncated: true });
  });

  it("rejects only when bash cannot be started", async () => {
    const missing = join(dir, "does-not-exist");
    await expect(run({ command: "true", cwd: missing })).rejects.toThrow(missing);
  });
});
