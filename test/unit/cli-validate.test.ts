import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommand } from "../support/cli.js";

/** `tau-gateway validate`, run in-process: files, stdin, both output formats, exit statuses, usage errors. */

let dir: string;
const file = async (name: string, lines: unknown[]) => {
  const path = join(dir, name);
  await writeFile(path, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n");
  return path;
};

const listRequest = { version: 18, type: "request", id: "r1", method: "session.list", params: {} };
const listResponse = { version: 18, type: "response", id: "r1", ok: true, result: { sessions: [{ sessionId: "s1", lifecycle: "idle" }] } };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tau-gateway-validate-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("tau-gateway validate", () => {
  it("exits 0 and prints the summary for a valid transcript", async () => {
    const path = await file("ok.jsonl", [listRequest, "", listResponse]);
    const r = await runCommand(["validate", path]);
    expect(r).toMatchObject({ code: 0, stdout: "2 valid, 0 invalid\n" });
  });

  it("checks a response against the result of its request's method", async () => {
    const wrong = { ...listResponse, result: { sessionId: "s1" } };
    const path = await file("wrong-result.jsonl", [listRequest, wrong]);
    const r = await runCommand(["validate", path]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`${path}:2: tau session.list: /result/sessions: is required\n1 valid, 1 invalid\n`);
  });

  it("reports a broken JSON line with its number and keeps going", async () => {
    const path = await file("broken.jsonl", [listRequest, "{not json", listResponse]);
    const r = await runCommand(["validate", path]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:2: \\?: /: not valid JSON`, "m"));
    expect(r.stdout.endsWith("2 valid, 1 invalid\n")).toBe(true);
  });

  it("flags unknown and duplicate ids", async () => {
    const orphan = { ...listResponse, id: "nobody" };
    const path = await file("ids.jsonl", [listRequest, listRequest, orphan]);
    const r = await runCommand(["validate", path]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(":2: tau session.list: /id: duplicate id \"r1\"");
    expect(r.stdout).toContain(':3: tau response: /id: no open request with id "nobody"');
  });

  it("reads stdin, detects the dialect per line and prints JSON", async () => {
    const lines = [
      { id: 1, method: "session/send", params: { sessionId: "s", content: 42 } },
      listRequest,
      { direction: "client", message: { id: 2, method: "ping" } },
    ];
    const r = await runCommand(["validate", "--format", "json", "-"], { stdin: lines.map((l) => JSON.stringify(l)).join("\n") });
    expect(r.code).toBe(1);
    const out = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(out).toEqual([
      { file: "<stdin>", line: 1, dialect: "ask", subject: "session/send", pointer: "/params/content", message: "must be of type string" },
      { valid: 2, invalid: 1 },
    ]);
  });

  it("checks Ask reverse-request answers against their request", async () => {
    const permission = { id: 10001, method: "interaction/requestPermission", params: { requestId: "q1", toolName: "deploy" } };
    const path = await file("reverse.jsonl", [
      { direction: "server", message: permission },
      { direction: "client", message: { id: 10001, result: { decision: "maybe" } } },
    ]);
    const r = await runCommand(["validate", "--dialect", "ask", path]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(":2: ask interaction/requestPermission: /result/decision: must be one of");
  });

  it("checks Codex app-server transcripts with --dialect codex, and recognises them without it", async () => {
    const lines = [
      { direction: "client", message: { id: 1, method: "turn/start", params: { threadId: "t", input: [{ type: "text", text: "hi" }] } } },
      { direction: "server", message: { id: 1, result: { turn: { id: "u", items: [], status: "running" } } } },
      { direction: "server", message: { method: "item/agentMessage/delta", params: { threadId: "t", turnId: "u", itemId: "m", delta: "Hi" } } },
      { direction: "server", message: { id: 0, method: "item/commandExecution/requestApproval", params: { threadId: "t", turnId: "u", itemId: "c", startedAtMs: 1 } } },
      { direction: "client", message: { id: 0, result: { decision: "acceptForSession" } } },
    ];
    const path = await file("codex.jsonl", lines);
    for (const args of [["validate", "--dialect", "codex", path], ["validate", path]]) {
      const r = await runCommand(args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stdout).toContain(`:2: codex turn/start: /result/turn/status: must be one of "completed", "interrupted", "failed", "inProgress"`);
      expect(r.stdout.endsWith("4 valid, 1 invalid\n")).toBe(true);
    }
  });

  it("correlates the gateway's error answers to requests that were themselves wrong, and flags only the wrong request", async () => {
    // The answers as the gateway writes them (test/e2e/ask/ask-errors.test.ts provokes each for real).
    const lines = [
      { direction: "client", message: { jsonrpc: "2.0", id: 1, method: "session/teleport", params: {} } },
      { direction: "server", message: { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "Method not found: session/teleport" } } },
      { direction: "client", message: { jsonrpc: "2.0", id: 2, method: 7 } },
      { direction: "server", message: { jsonrpc: "2.0", id: 2, error: { code: -32600, message: "Invalid Request" } } },
      { direction: "client", message: { jsonrpc: "2.0", id: 3 } },
      { direction: "server", message: { jsonrpc: "2.0", id: 3, error: { code: -32600, message: "Invalid Request: Method not specified" } } },
      { direction: "client", message: { jsonrpc: "2.0", id: 4, method: "session/send", params: { sessionId: "s", content: 42 } } },
      { direction: "server", message: { jsonrpc: "2.0", id: 4, error: { code: -32602, message: "Invalid params: content must be a string" } } },
    ];
    const path = await file("answered-errors.jsonl", lines);
    const r = await runCommand(["validate", "--format", "json", path]);
    expect(r.code).toBe(1);
    const out = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(out.map((o) => o.line ?? "summary")).toEqual([1, 3, 5, 7, "summary"]);
    expect(out.at(-1)).toEqual({ valid: 4, invalid: 4 });
    // Bare messages, without a direction, correlate the same way.
    const bare = await file("answered-errors-bare.jsonl", lines.map((l) => l.message));
    expect((await runCommand(["validate", bare])).stdout.endsWith("4 valid, 4 invalid\n")).toBe(true);
  });

  it("judges an answer to an unknown method or to a notification sent with an id by the envelope and the dialect's error shape", async () => {
    const wrongError = { jsonrpc: "2.0", id: 2, error: { code: "nope", message: "x" } };
    for (const dialect of ["ask", "codex", "acp"]) {
      const path = await file(`envelope-${dialect}.jsonl`, [
        { direction: "client", message: { jsonrpc: "2.0", id: 1, method: "initialized" } },
        { direction: "server", message: { jsonrpc: "2.0", id: 1, result: {} } },
        { direction: "client", message: { jsonrpc: "2.0", id: 2, method: "no/such/method" } },
        { direction: "server", message: wrongError },
        { direction: "server", message: { jsonrpc: "2.0", id: 3, result: {} } },
      ]);
      const r = await runCommand(["validate", "--dialect", dialect, path]);
      expect(r.code, dialect).toBe(1);
      expect(r.stdout, dialect).not.toContain(":2:");
      expect(r.stdout, dialect).toContain(`:3: ${dialect} no/such/method: /method: unknown client method`);
      expect(r.stdout, dialect).toMatch(new RegExp(`:4: ${dialect} no/such/method: /error/code: must be of type (integer|number)`));
      expect(r.stdout, dialect).toContain(`:5: ${dialect} response: /id: no open request with id 3`);
    }
  });

  it("correlates a Tau error answer to a request for an unknown method", async () => {
    const path = await file("tau-unknown.jsonl", [
      { direction: "client", message: { version: 18, type: "request", id: "x1", method: "session.teleport", params: {} } },
      { direction: "server", message: { version: 18, type: "response", id: "x1", ok: false, error: { code: "method_not_found", message: "unknown method session.teleport" } } },
    ]);
    const r = await runCommand(["validate", path]);
    expect(r.stdout).toBe(`${path}:1: tau session.teleport: /method: unknown method "session.teleport"\n1 valid, 1 invalid\n`);
  });

  it("rejects Tau messages of another version than the one chosen", async () => {
    const path = await file("v13.jsonl", [{ ...listRequest, version: 13 }]);
    expect((await runCommand(["validate", path])).stdout).toContain("/version: must be 18 (got 13)");
    expect((await runCommand(["validate", "--tau-version", "13", path])).code).toBe(0);
  });

  it("exits 2 on usage and I/O errors without a stack trace", async () => {
    for (const args of [["validate"], ["validate", "--format", "xml", "x"], ["validate", "--tau-version", "12", "x"], ["validate", "--bogus", "x"], ["validate", join(dir, "missing.jsonl")]]) {
      const r = await runCommand(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stderr).toMatch(/^tau-gateway validate: /);
    }
  });

  it("prints its usage with --help and exits 0", async () => {
    const r = await runCommand(["validate", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("usage: tau-gateway validate");
  });
});
