import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import type { TranscriptVerdicts } from "../../../src/gateway/inspector/transcript-verdicts.js";
import { DEFAULT_MAX_TRANSCRIPT_BYTES } from "../../../src/gateway/inspector/transcript-route.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { runCommand } from "../../support/cli.js";
import { driveTraffic, startInspectorGateway } from "../../support/inspector-gateway.js";

/**
 * A transcript dropped on the inspector's page (`POST /inspector/api/transcript`): each line gets
 * the verdict `tau-gateway validate` gives it, bad lines one by one, behind the same checks as the
 * inspector's other data; too large a body is a clear 413.
 */

const cleanups = cleanupsAfterEach();
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "inspector-transcript-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const LOCAL = { host: "127.0.0.1", remoteAddress: "127.0.0.1" };

/** What `tau-gateway validate --format json` reports on `text`: the pointers per invalid line, and the totals. */
async function validateReport(text: string) {
  const path = join(dir, `t-${Math.random().toString(36).slice(2)}.jsonl`);
  await writeFile(path, text);
  const result = await runCommand(["validate", "--format", "json", path]);
  const lines = result.stdout.trimEnd().split("\n").map((line) => JSON.parse(line));
  const totals = lines.pop() as { valid: number; invalid: number };
  const pointers = new Map<number, string[]>();
  for (const issue of lines) pointers.set(issue.line, [...(pointers.get(issue.line) ?? []), issue.pointer]);
  return { totals, pointers };
}

describe("a transcript dropped on the inspector", () => {
  it("gets validate's verdict on every line: a downloaded recording with a broken line and a bad direction added", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const traffic = await driveTraffic(gw, cleanups);
    const codex = gw.hub.snapshot().connections.find((c) => c.dialect === "codex")!;
    const recording = await (await fetch(`${gw.baseUrl}/inspector/api/connections/${codex.id}/transcript`)).text();
    const text = `${recording}{"direction":"client","message":{"jsonrpc":"2.0","id":99,"method":"turn/start"\n{"direction":"sideways","message":{}}\n\n`;

    const response = await fetch(`${gw.baseUrl}/inspector/api/transcript`, { method: "POST", headers: { "content-type": "application/x-ndjson" }, body: text });
    expect(response.status).toBe(200);
    const result = (await response.json()) as TranscriptVerdicts;
    const expected = await validateReport(text);
    expect({ valid: result.valid, invalid: result.invalid }).toEqual(expected.totals);
    expect(result).toMatchObject({ dialect: "codex", sequenceGaps: 0 });
    const invalid = result.frames.filter((f) => f.verdict.status !== "valid");
    expect(new Map(invalid.map((f) => [f.index, f.verdict.issues.map((i) => i.pointer)]))).toEqual(expected.pointers);
    // The frames read as the live ones do: the bad turn/start with its pointer, the broken line, the bad direction.
    const lines = text.split("\n");
    expect(invalid.map((f) => [f.index, f.verdict.status])).toEqual([
      [lines.findIndex((l) => l.includes('"not a list"')) + 1, "invalid"],
      [lines.length - 3, "not-json"],
      [lines.length - 2, "invalid"],
    ]);
    const bad = invalid[0]!;
    expect(bad).toMatchObject({ connection: "transcript", dialect: "codex", direction: "client", kind: "request", method: "turn/start", session: traffic.threadId });
    expect(bad.verdict.issues[0]!.pointer).toMatch(/^\/params\/input/);
    expect(invalid[1]!.raw).toContain('"method":"turn/start"');
    expect(invalid[2]!.verdict.issues[0]).toMatchObject({ pointer: "/direction", message: 'must be "client" or "server"' });
    // Answers are paired with their requests, with the latency the recorded times give.
    const answer = result.frames.find((f) => f.kind === "error" && f.answers?.index === bad.index)!;
    expect(answer.answers!.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("forces a dialect on request, and flags a sequence gap in Ask events", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const event = (seq: number) => JSON.stringify({ jsonrpc: "2.0", method: "session/event", params: { sessionId: "s1", event: { type: "model.streaming", seq, payload: { delta: "x" } } } });
    const post = (body: string, query = "") =>
      gw.app.inject({ method: "POST", url: `/inspector/api/transcript${query}`, headers: { host: LOCAL.host, "content-type": "text/plain; charset=utf-8" }, remoteAddress: LOCAL.remoteAddress, payload: body });
    const ask = await post([event(1), event(2), event(4)].join("\n"));
    expect(ask.statusCode).toBe(200);
    const verdicts = ask.json() as TranscriptVerdicts;
    expect(verdicts).toMatchObject({ lines: 3, valid: 3, invalid: 0, sequenceGaps: 1 });
    expect(verdicts.frames.map((f) => f.verdict.status)).toEqual(["valid", "valid", "sequence-gap"]);
    expect(verdicts.frames[2]!.direction).toBeUndefined();

    // ACP shares method names with Ask: detected as Ask unless forced.
    const acpInit = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    expect((await post(acpInit)).json().frames[0].dialect).toBe("ask");
    expect((await post(acpInit, "?dialect=acp")).json()).toMatchObject({ dialect: "acp", frames: [{ dialect: "acp", verdict: { status: "valid" } }] });
    const bad = await post(acpInit, "?dialect=smtp");
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: "bad_dialect", message: expect.stringMatching(/^dialect must be one of (?=.*\btau\b)(?=.*\bask\b)(?=.*\bcodex\b)(?=.*\bacp\b)(?=.*\bmcp\b).* \(got "smtp"\)$/) });
  });

  it("refuses too large a body with 413, another media type or charset with 415", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const post = (payload: string, contentType?: string) =>
      gw.app.inject({ method: "POST", url: "/inspector/api/transcript", headers: { host: LOCAL.host, ...(contentType ? { "content-type": contentType } : {}) }, remoteAddress: LOCAL.remoteAddress, payload });
    const tooLarge = await post("x".repeat(DEFAULT_MAX_TRANSCRIPT_BYTES + 1), "application/x-ndjson");
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json()).toEqual({ error: "transcript_too_large", message: `a transcript checked here may be at most ${DEFAULT_MAX_TRANSCRIPT_BYTES} bytes; run tau-gateway validate on larger files` });
    expect(tooLarge.headers["content-security-policy"]).toContain("script-src 'self'");
    for (const contentType of ["application/octet-stream", "text/plain; charset=latin1", undefined]) {
      const response = await post("{}", contentType);
      expect(response.statusCode, String(contentType)).toBe(415);
      expect(response.json()).toMatchObject({ error: "unsupported_media_type" });
    }
    // A JSON body is read as a transcript too (one line, one message).
    expect((await post('{"jsonrpc":"2.0","id":1,"method":"ping"}', "application/json")).json()).toMatchObject({ valid: 1, invalid: 0 });
  });

  it("passes the inspector's checks first: Host, Origin, and with tokens a token", async () => {
    const tokens = TokenRegistry.parse(JSON.stringify([{ id: "a", token: "tenant-a", tenant: "a" }]), "tokens.json");
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ tokens }));
    const post = (headers: Record<string, string>) =>
      gw.app.inject({ method: "POST", url: "/inspector/api/transcript", headers: { "content-type": "application/x-ndjson", ...headers }, remoteAddress: "10.1.2.3", payload: "{}" });
    expect((await post({ host: LOCAL.host })).statusCode).toBe(401);
    expect((await post({ host: "evil.example", authorization: "Bearer tenant-a" })).statusCode).toBe(403);
    const foreign = await post({ host: LOCAL.host, origin: "http://evil.example", authorization: "Bearer tenant-a" });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toMatchObject({ error: "forbidden_origin" });
  });
});
