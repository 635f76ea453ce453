import { describe, expect, it } from "vitest";
import { RpcError } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { exitWithin, spawnStdio, type StdioChild } from "../../support/stdio-child.js";

/**
 * `tau-gateway stdio` as a child process under load and on the way out: a pipelined flood is
 * answered request by request (or refused with -32013 past the in-flight limit) without the
 * process growing with it; it exits on SIGTERM/SIGINT after draining, when stdin ends, and when
 * the parent stops reading for good (EPIPE on stdout).
 */

const cleanups = cleanupsAfterEach();
const stdio = (args: string[] = []) => spawnStdio(args, cleanups);

/** Sends `ping` until the answer is an error (the command has seen the signal), and returns that error. */
async function firstRefusal(child: StdioChild): Promise<RpcError> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const outcome = await child.client.request("ping").then(
      () => undefined,
      (err: unknown) => err,
    );
    if (outcome !== undefined) return outcome as RpcError;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("ping was never refused");
}

describe("tau-gateway stdio under a flood", () => {
  it(
    "answers each of 30,000 pipelined requests exactly once, stays bounded in memory while stdout is not read, and exits 0 when stdin ends",
    async () => {
      const FLOOD = 30_000;
      const child = stdio(["--max-inflight", "64"]);
      await child.client.request("initialize", { client: { name: "flood", version: "1" } });
      // Some sessions, so each session/list does real work upstream.
      for (let i = 0; i < 5; i++) await child.client.request("session/create", {});
      const before = child.rssMiB();
      let peak = before ?? 0;
      const sampler = setInterval(() => (peak = Math.max(peak, child.rssMiB() ?? 0)), 50);
      cleanups.push(() => clearInterval(sampler));

      const seen = child.lines.length;
      // The client floods without reading for a while, as a parent busy writing does.
      child.child.stdout.pause();
      // Written line by line, each once the one before has left for the pipe, so what has left
      // says how much the command took off its stdin (give or take the pipe's own buffer).
      const lines = Array.from({ length: FLOOD }, (_, i) => `${JSON.stringify({ id: `f${i}`, method: "session/list", params: {} })}\n`);
      const floodBytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
      let taken = 0;
      const writing = (async () => {
        for (const line of lines) {
          await new Promise<void>((resolve, reject) => child.child.stdin.write(line, (err) => (err ? reject(err) : resolve())));
          taken += Buffer.byteLength(line);
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      // A command that reads on while it cannot answer has taken all of it by now.
      const takenWhileUnread = taken;
      child.child.stdout.resume();
      await writing;
      await child.waitForLines(seen + FLOOD, 120_000);
      clearInterval(sampler);

      const answers = new Map<string, number>();
      const outcomes = new Map<string, number>();
      for (const line of child.lines.slice(seen)) {
        const id = String(line.id);
        answers.set(id, (answers.get(id) ?? 0) + 1);
        const outcome = "error" in line ? String((line.error as { code: number }).code) : "ok";
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
      expect(answers.size).toBe(FLOOD);
      expect([...answers.values()].every((count) => count === 1)).toBe(true);
      for (let i = 0; i < FLOOD; i++) expect(answers.has(`f${i}`)).toBe(true);
      // Answered, or refused past the in-flight limit: nothing else.
      expect([...outcomes.keys()].sort()).toEqual(["-32013", "ok"]);
      expect(outcomes.get("ok")).toBeGreaterThan(0);
      console.info(
        `stdio flood of ${FLOOD} (${(floodBytes / 1024).toFixed(0)} KiB): ${(takenWhileUnread / 1024).toFixed(0)} KiB taken while stdout was not read; ` +
          `RSS ${before?.toFixed(0)} MiB before, ${peak.toFixed(0)} MiB at most; outcomes ${JSON.stringify(Object.fromEntries(outcomes))}`,
      );
      // Bounded: with stdout backed up the command stops reading, so the rest of the flood stays
      // with the writer. What it took is the pipe plus what one read brings in — not the flood.
      // (Its memory follows from that; resident size is logged above, not asserted, as garbage
      // collection on a loaded machine makes it noisy.)
      expect(takenWhileUnread).toBeLessThan(Math.min(1024 * 1024, floodBytes / 2));
      expect(child.client.invalid).toEqual([]);
      expect(child.malformed).toEqual([]);

      child.child.stdin.end();
      expect(await exitWithin(child.exit, 15_000)).toEqual({ code: 0, signal: null });
    },
    180_000,
  );
});

describe("tau-gateway stdio on the way out", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("exits 0 on %s while idle, with stdin still open, without waiting for the drain timeout", async (signal) => {
    const child = stdio(["--drain-timeout", "60000"]);
    await child.client.request("initialize", {});
    const sentAt = Date.now();
    child.child.kill(signal);
    expect(await exitWithin(child.exit, 10_000)).toEqual({ code: 0, signal: null });
    expect(Date.now() - sentAt).toBeLessThan(10_000);
  });

  it("on SIGTERM during a turn: refuses new requests with -32012, lets the turn finish, then exits 0", async () => {
    const child = stdio(["--drain-timeout", "60000"]);
    const { client } = child;
    const sessionId = (await client.request("session/create", {})).session.sessionId as string;
    await client.request("session/subscribe", { sessionId });
    const sent = await client.request("session/send", { sessionId, content: "/sleep 1500\nslept well" });
    await client.waitForEvent(sessionId, "turn.started");

    child.child.kill("SIGTERM");
    const refused = await firstRefusal(child);
    expect(refused).toMatchObject({ code: -32012, message: expect.stringMatching(/shutting down/) });
    const completed = await client.waitForEvent(sessionId, "turn.completed");
    expect(completed.payload).toMatchObject({ turnId: sent.turnId, response: "You said: slept well" });
    expect(await exitWithin(child.exit, 15_000)).toEqual({ code: 0, signal: null });
    expect(client.invalid).toEqual([]);
  });

  it("on SIGTERM during a turn that cannot finish: exits 0 once the drain timeout has passed", async () => {
    const child = stdio(["--drain-timeout", "1000"]);
    const sessionId = (await child.client.request("session/create", {})).session.sessionId as string;
    await child.client.request("session/send", { sessionId, content: "/sleep 60000\nnever" });
    const sentAt = Date.now();
    child.child.kill("SIGTERM");
    expect(await exitWithin(child.exit, 15_000)).toEqual({ code: 0, signal: null });
    const took = Date.now() - sentAt;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(10_000);
  });

  it("when stdin ends during a turn that cannot finish: exits 0 once the drain timeout has passed", async () => {
    const child = stdio(["--drain-timeout", "1000"]);
    const sessionId = (await child.client.request("session/create", {})).session.sessionId as string;
    await child.client.request("session/send", { sessionId, content: "/sleep 60000\nnever" });
    child.child.stdin.end();
    expect(await exitWithin(child.exit, 15_000)).toEqual({ code: 0, signal: null });
  });

  it("exits 0 when the parent stops reading for good (EPIPE on stdout), with stdin still open", async () => {
    const child = stdio(["--drain-timeout", "60000"]);
    await child.client.request("initialize", {});
    child.child.stdout.destroy();
    // Its answer meets a closed pipe.
    child.client.send({ id: "after-close", method: "ping" });
    expect(await exitWithin(child.exit, 15_000)).toEqual({ code: 0, signal: null });
  });

  it("exits 0 on SIGTERM while its stdout is backed up (the parent neither reads nor closes it)", async () => {
    const child = stdio(["--drain-timeout", "1000"]);
    await child.client.request("initialize", {});
    child.child.stdout.pause();
    let flood = "";
    for (let i = 0; i < 20_000; i++) flood += `${JSON.stringify({ id: i + 100, method: "ping" })}\n`;
    child.child.stdin.write(flood);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const sentAt = Date.now();
    child.child.kill("SIGTERM");
    expect(await exitWithin(child.exit, 15_000)).toEqual({ code: 0, signal: null });
    expect(Date.now() - sentAt).toBeLessThan(10_000);
  });
});
