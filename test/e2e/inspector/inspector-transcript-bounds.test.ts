import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_TRANSCRIPT_BYTES } from "../../../src/gateway/inspector/transcript-route.js";
import { TRANSCRIPT_CHECKS_WAITING, TranscriptChecks } from "../../../src/gateway/inspector/transcript-check.js";
import type { TranscriptVerdicts } from "../../../src/gateway/inspector/transcript-verdicts.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startInspectorGateway } from "../../support/inspector-gateway.js";
import { worstStallMs } from "../../support/loop-stall.js";

/**
 * A transcript checked on the inspector costs the gateway's event loop nothing in proportion to
 * it: the check runs in a worker thread, bounded in time (a check past it is ended, with a clear
 * error) and in how many wait; a deeply nested line is a verdict, never an HTTP 500. The gateway
 * runs in this process, so an event-loop-delay monitor sees any stall of its loop.
 */

const cleanups = cleanupsAfterEach();
/**
 * An 8 MiB transcript held this loop for 41 s when it was checked on it. What remains is the
 * sending of 8 MiB and the receiving of the verdicts (some 20 MB) by the client that shares the
 * loop here, and their garbage collection: a few hundred ms.
 */
const STALL_BOUND_MS = 1_000;

const post = (baseUrl: string, body: string) => fetch(`${baseUrl}/inspector/api/transcript`, { method: "POST", headers: { "content-type": "application/x-ndjson" }, body });

describe("checking a transcript on the inspector", () => {
  it("checks a transcript of the largest size taken without holding the gateway's event loop", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    // Requests of distinct ids (a repeated id is a finding of its own).
    const line = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "session/send", params: { sessionId: "s", content: "x".repeat(200) } })}\n`;
    const count = Math.floor((DEFAULT_MAX_TRANSCRIPT_BYTES - 1024) / Buffer.byteLength(line(1_000_000)));
    const text = Array.from({ length: count }, (_, i) => line(1_000_000 + i)).join("");
    // The first check starts the worker: not measured.
    expect((await post(gw.baseUrl, line(1))).status).toBe(200);
    const { result, stallMs } = await worstStallMs(async () => {
      const response = await post(gw.baseUrl, text);
      return { status: response.status, text: await response.text() };
    });
    // Parsed once the measure is over: the client here shares the gateway's loop.
    const body = JSON.parse(result.text) as TranscriptVerdicts;
    expect(result.status).toBe(200);
    expect(body).toMatchObject({ lines: count, valid: count, invalid: 0 });
    console.log(`worst stall while an 8 MiB transcript was checked: ${stallMs.toFixed(0)} ms`);
    expect(stallMs).toBeLessThan(STALL_BOUND_MS);
  }, 120_000);

  it("a line nested too deep is a verdict on that line, and the others are checked", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const deep = `${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`;
    const response = await post(gw.baseUrl, `{"jsonrpc":"2.0","id":1,"method":"ping"}\n${deep}\n`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as TranscriptVerdicts;
    expect(body).toMatchObject({ lines: 2, valid: 1, invalid: 1 });
    expect(body.frames[1]!.verdict.issues[0]!.message).toContain("not checked");
  }, 60_000);

  it("a check past its time is ended with a clear error, and the next check gets a new worker; past the queue, checks are refused at once", async () => {
    const line = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
    // No worker starts and checks a line within a millisecond.
    const hurried = new TranscriptChecks(1);
    cleanups.push(() => hurried.close());
    expect(await hurried.check(line, undefined)).toEqual({ ok: false, reason: "timeout", message: "checking the transcript took more than 1 ms; run tau-gateway validate on it" });

    const checks = new TranscriptChecks();
    cleanups.push(() => checks.close());
    const outcomes = await Promise.all(Array.from({ length: TRANSCRIPT_CHECKS_WAITING + 2 }, () => checks.check(line, undefined)));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(TRANSCRIPT_CHECKS_WAITING + 1);
    expect(outcomes.filter((o) => !o.ok)).toEqual([expect.objectContaining({ reason: "busy" })]);
  }, 60_000);
});
