import { describe, expect, it } from "vitest";
import { errorOf, HostHarness, hostWithSessionPerTest, resultOf, type TauTestClient } from "../../support/tau-client.js";

/**
 * `session.exec` / `session.cancelExec` of the embedded Tau host (spec §4.3): a real non-interactive
 * login bash in the session cwd, outside the turn machinery and without snapshot changes.
 */

let h: HostHarness;
let client: TauTestClient;
let sessionId: string;
let execCounter = 0;

hostWithSessionPerTest((fresh) => ({ harness: h, client, sessionId } = fresh));

const exec = (params: Record<string, unknown>) => client.call("session.exec", { sessionId, execId: `exec-${++execCounter}`, ...params });

describe("session.exec", () => {
  it("runs a command in the session cwd and reports its output and exit code", async () => {
    const result = await exec({ command: "pwd; echo err >&2; exit 3" });
    expect(result).toMatchObject({
      stdout: `${h.cwd}\n`,
      stderr: "err\n",
      exitCode: 3,
      truncated: false,
      timedOut: false,
      aborted: false,
      closeSignal: null,
    });
    expect(result.output).toContain(h.cwd);
    expect(result.output).toContain("err");
  });

  it("uses a login bash and keeps the host HOME", async () => {
    const result = await exec({ command: 'shopt -q login_shell && echo login; printf "%s" "$HOME"' });
    expect(result.stdout).toBe(`login\n${process.env.HOME ?? ""}`);
  });

  it("passes args as $0 and $@, env variables and stdin", async () => {
    const args = await exec({ command: 'printf "%s|" "$0" "$@"', args: ["zero", "one two", "three"] });
    expect(args.stdout).toBe("zero|one two|three|");

    const env = await exec({ command: 'printf "%s" "$GREETING"', env: { GREETING: "hello there" } });
    expect(env.stdout).toBe("hello there");

    const stdin = await exec({ command: "cat", stdinBase64: Buffer.from("line1\nline2").toString("base64") });
    expect(stdin.stdout).toBe("line1\nline2");

    const cwd = await exec({ command: "pwd", cwd: "/" });
    expect(cwd.stdout).toBe("/\n");
  });

  it("rejects HOME in env and a malformed request", async () => {
    expect((await client.fail("session.exec", { sessionId, execId: "x", command: "true", env: { HOME: "/tmp" } })).code).toBe("invalid_params");
    expect((await client.fail("session.exec", { sessionId, execId: "", command: "true" })).code).toBe("invalid_params");
    expect((await client.fail("session.exec", { sessionId, execId: "x", command: "true", stdinBase64: "abc" })).code).toBe("invalid_params");
    const missing = await client.fail("session.exec", { sessionId: "no-such-session", execId: "x", command: "true" });
    expect(missing.code).toBe("not_found");
    expect(missing.data).toEqual({ sessionId: "no-such-session" });
  });

  it("stops at timeoutMs with timedOut", async () => {
    const result = await exec({ command: "sleep 20", timeoutMs: 200 });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).not.toBe(0);
  });

  it("truncates captured output at maxCaptureBytes", async () => {
    const command = "head -c 5000 /dev/zero | tr '\\0' a";
    const full = await exec({ command });
    expect(full.stdout).toBe("a".repeat(5000));
    expect(full.truncated).toBe(false);

    const cut = await exec({ command, maxCaptureBytes: 100 });
    expect(cut.truncated).toBe(true);
    expect(Buffer.byteLength(cut.stdout)).toBeLessThanOrEqual(100);
    expect(cut.stdout).toMatch(/^a+$/);
    expect(cut.exitCode).toBe(0);
  });

  it("does not change the session snapshot", async () => {
    const before = await client.snapshot(sessionId);
    const since = client.mark();
    await exec({ command: "echo quiet" });
    expect((await client.snapshot(sessionId)).revision).toBe(before.revision);
    expect(client.deltas(sessionId, since)).toEqual([]);
  });
});

describe("exec cancellation", () => {
  it("is busy for a duplicate active execId and cancelled by cancelExec", async () => {
    const first = client.send("session.exec", { sessionId, execId: "dup", command: "sleep 20" });
    await client.snapshot(sessionId); // a round trip so the first exec is registered
    const second = await client.fail("session.exec", { sessionId, execId: "dup", command: "echo second" });
    expect(second.code).toBe("busy");

    expect(await client.call("session.cancelExec", { sessionId, execId: "dup" })).toEqual({ cancelled: true });
    expect(errorOf(await first.response).code).toBe("cancelled");
    expect(await client.call("session.cancelExec", { sessionId, execId: "dup" })).toEqual({ cancelled: false });

    // The id is free again once the first exec is gone.
    expect((await client.call("session.exec", { sessionId, execId: "dup", command: "echo again" })).stdout).toBe("again\n");
  });

  // An execId names an exec of one session (Tau keys them by session and id): a second
  // connection reusing an active id in that session is the "host-level exec collision" of spec §3,
  // and session.cancelExec reaches the session's exec whichever connection started it.
  it("is busy for an execId active in the session from another connection, which can cancel it", async () => {
    const other = await h.connect("other");
    const first = client.send("session.exec", { sessionId, execId: "shared", command: "sleep 20" });
    await client.snapshot(sessionId);
    const collision = await other.fail("session.exec", { sessionId, execId: "shared", command: "echo second" });
    expect(collision).toEqual({ code: "busy", message: "execution 'shared' is already active" });

    expect(await other.call("session.cancelExec", { sessionId, execId: "shared" })).toEqual({ cancelled: true });
    expect(errorOf(await first.response)).toMatchObject({ code: "cancelled", message: "execution was cancelled" });
  });

  it("lets one connection use the same execId in two sessions at once", async () => {
    const second = await client.createSession(h.cwd);
    const long = client.send("session.exec", { sessionId, execId: "same", command: "sleep 20" });
    await client.snapshot(sessionId);
    expect((await client.call("session.exec", { sessionId: second, execId: "same", command: "echo other session" })).stdout).toBe("other session\n");
    // Cancelling the id in the second session leaves the first session's exec alone.
    expect(await client.call("session.cancelExec", { sessionId: second, execId: "same" })).toEqual({ cancelled: false });
    expect(client.hasResponse(long.id)).toBe(false);
    expect(await client.call("session.cancelExec", { sessionId, execId: "same" })).toEqual({ cancelled: true });
    expect(errorOf(await long.response).code).toBe("cancelled");
  });

  it("reports cancelled:false for an unknown execId", async () => {
    expect(await client.call("session.cancelExec", { sessionId, execId: "never-started" })).toEqual({ cancelled: false });
  });

  it("is cancelled by session.interrupt", async () => {
    const running = client.send("session.exec", { sessionId, execId: "long", command: "sleep 20" });
    await client.snapshot(sessionId);
    await client.call("session.interrupt", { sessionId });
    expect(errorOf(await running.response).code).toBe("cancelled");
  });

  it("runs alongside a turn", async () => {
    const turn = client.send("session.submit", { sessionId, text: "/sleep 10000\nbusy" });
    await client.waitForTurnRunning(sessionId);
    expect((await exec({ command: "echo side" })).stdout).toBe("side\n");
    expect(client.hasResponse(turn.id)).toBe(false);
    await client.call("session.interrupt", { sessionId });
    expect(resultOf(await turn.response).turn.status).toBe("aborted");
  });
});
