import { describe, expect, it } from "vitest";
import { TranscriptChecker } from "../../src/validation/transcript.js";
import { ProtocolValidators } from "../../src/validation/validator.js";
import { askEvent, askRequest, createParams, localEnv, png1x1, tauRequest } from "../support/messages.js";

const validators = ProtocolValidators.shared();
const tau = validators.get("tau", 18);
const tau13 = validators.get("tau", 13);
const ask = validators.get("ask");

/** Asserts the message is invalid and that one issue points exactly at `pointer`. */
function expectIssueAt(result: { ok: boolean; issues: { pointer: string; message: string }[] }, pointer: string) {
  expect(result.ok).toBe(false);
  expect(result.issues.map((i) => i.pointer)).toContain(pointer);
}

describe("Tau v18 client messages", () => {
  it("accepts a well-formed request of every constraint family", () => {
    const ok = [
      tauRequest("session.create", createParams({ attributes: { source: "sdk" }, reasoning: "high", autoCompactThresholdTokens: 50000 })),
      tauRequest("session.create", createParams({ executionEnvironment: { kind: "fly-sprite", spriteName: "box", cwd: "/work" } })),
      tauRequest("session.list", {}),
      tauRequest("session.exec", { sessionId: "s", execId: "e", command: "ls", stdinBase64: "aGk=", maxCaptureBytes: 25165824 }),
      tauRequest("session.setAutoCompactThreshold", { sessionId: "s", thresholdTokens: null }),
      tauRequest("session.clientTool.result", { sessionId: "s", callId: "c", ok: true, content: [{ type: "image", data: png1x1, mimeType: "image/png" }] }),
    ];
    for (const message of ok) expect(tau.message("client", message), JSON.stringify(message)).toMatchObject({ ok: true, issues: [] });
  });

  const cases: Array<[string, unknown, string]> = [
    ["numeric id", tauRequest("session.list", {}, 7), "/id"],
    ["blank id", tauRequest("session.list", {}, "  "), "/id"],
    ["wrong version", tauRequest("session.list", {}, "r", 17), "/version"],
    ["missing params", { version: 18, type: "request", id: "r", method: "session.list" }, "/params"],
    ["unknown method", tauRequest("session.teleport", {}), "/method"],
    ["whitespace-only text", tauRequest("session.submit", { sessionId: "s", text: " \t " }), "/params/text"],
    ["33 attributes", tauRequest("session.create", createParams({ attributes: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, "v"])) })), "/params/attributes"],
    ["65-character attribute key", tauRequest("session.create", createParams({ attributes: { ["k".repeat(65)]: "v" } })), `/params/attributes/${"k".repeat(65)}`],
    ["HOME in env", tauRequest("session.create", createParams({ executionEnvironment: localEnv({ env: { HOME: "/x" } }) })), "/params/executionEnvironment/env/HOME"],
    ["bad env name", tauRequest("session.exec", { sessionId: "s", execId: "e", command: "ls", env: { "1BAD": "x" } }), "/params/env/1BAD"],
    ["relative cwd", tauRequest("session.create", createParams({ executionEnvironment: localEnv({ cwd: "work/project" }) })), "/params/executionEnvironment/cwd"],
    ["unknown environment kind", tauRequest("session.create", createParams({ executionEnvironment: { kind: "cloudflare-sandbox", bridgeId: "b", sandboxId: "s", cwd: "/w" } })), "/params/executionEnvironment/kind"],
    ["bad reasoning value", tauRequest("session.setReasoning", { sessionId: "s", reasoning: "extreme" }), "/params/reasoning"],
    ["extra field in strict presentation", tauRequest("session.clientTool.ack", { sessionId: "s", callId: "c", presentation: { subject: "x", colour: "red" } }), "/params/presentation/colour"],
    ["CR in presentation subject", tauRequest("session.clientTool.ack", { sessionId: "s", callId: "c", presentation: { subject: "a\rb" } }), "/params/presentation/subject"],
    ["image with a bad MIME type", tauRequest("session.clientTool.result", { sessionId: "s", callId: "c", ok: true, content: [{ type: "image", data: png1x1, mimeType: "image/gif" }] }), "/params/content/0/mimeType"],
    ["image with bad base64", tauRequest("session.clientTool.result", { sessionId: "s", callId: "c", ok: true, content: [{ type: "image", data: "not base64!", mimeType: "image/png" }] }), "/params/content/0/data"],
    ["17 images", tauRequest("session.clientTool.result", { sessionId: "s", callId: "c", ok: true, content: Array.from({ length: 17 }, () => ({ type: "image", data: png1x1, mimeType: "image/png" })) }), "/params/content"],
    ["autoCompactThresholdTokens 49,999", tauRequest("session.create", createParams({ autoCompactThresholdTokens: 49999 })), "/params/autoCompactThresholdTokens"],
    ["threshold as a numeric string", tauRequest("session.setAutoCompactThreshold", { sessionId: "s", thresholdTokens: "60000" }), "/params/thresholdTokens"],
    ["extra field in strict setAutoCompactThreshold params", tauRequest("session.setAutoCompactThreshold", { sessionId: "s", thresholdTokens: null, force: true }), "/params/force"],
    ["exec maxCaptureBytes over 24 MiB", tauRequest("session.exec", { sessionId: "s", execId: "e", command: "ls", maxCaptureBytes: 24 * 1024 * 1024 + 1 }), "/params/maxCaptureBytes"],
    ["exec stdin not base64", tauRequest("session.exec", { sessionId: "s", execId: "e", command: "ls", stdinBase64: "aGk" }), "/params/stdinBase64"],
    ["autocomplete limit 101", tauRequest("session.autocompletePaths", { sessionId: "s", query: "", limit: 101 }), "/params/limit"],
  ];
  it.each(cases)("rejects %s", (_name, message, pointer) => {
    expectIssueAt(tau.message("client", message), pointer);
  });

  it("says what was wrong in words", () => {
    const result = tau.message("client", tauRequest("session.submit", { sessionId: "s", text: "   " }));
    expect(result.issues).toContainEqual(expect.objectContaining({ pointer: "/params/text", message: "must not be empty or whitespace only" }));
    expect(result.subject).toBe("session.submit");
  });

  it("accepts unknown fields where Tau strips them", () => {
    expect(tau.message("client", { ...tauRequest("session.list", { extra: 1 }), trace: "x" }).ok).toBe(true);
  });
});

describe("large base64 values", () => {
  // 8 MiB of stdin, well within the 16 MiB exec bound and the 32 MiB message limit: the former
  // pattern, `(?:[A-Za-z0-9+/]{4})*…`, threw RangeError (stack overflow) on it.
  const stdin = Buffer.alloc(6 * 1024 * 1024, 0x61).toString("base64");
  const exec = (stdinBase64: string) => tauRequest("session.exec", { sessionId: "s", execId: "e", command: "cat", stdinBase64 });

  it("accepts 8 MiB of padded base64 and refuses it cut or with a stray character at its end", () => {
    expect(stdin.length).toBe(8 * 1024 * 1024);
    expect(tau.message("client", exec(stdin))).toMatchObject({ ok: true, issues: [] });
    expect(tau.message("client", exec(`${stdin.slice(0, -2)}==`))).toMatchObject({ ok: true });
    for (const bad of [`${stdin}!`, stdin.slice(0, -1), `${stdin.slice(0, 4096)}=${stdin.slice(4097)}`]) {
      const result = tau.message("client", exec(bad));
      expect(result.ok).toBe(false);
      expect(result.issues).toContainEqual(expect.objectContaining({ pointer: "/params/stdinBase64", message: "must be padded standard base64" }));
    }
  });

  it("refuses a value past the decoded bound by its length", () => {
    const over = "A".repeat(4 * Math.ceil((16 * 1024 * 1024) / 3) + 4);
    const result = tau.message("client", exec(over));
    expect(result.ok).toBe(false);
    expect(result.issues).toContainEqual(expect.objectContaining({ pointer: "/params/stdinBase64", keyword: "maxLength" }));
  });
});

describe("Tau versions", () => {
  it("knows v13-only methods and environments only in v13", () => {
    expect(tau13.message("client", tauRequest("session.startGoal", { sessionId: "s", objective: "ship it" }, "g", 13)).ok).toBe(true);
    expectIssueAt(tau.message("client", tauRequest("session.startGoal", { sessionId: "s", objective: "ship it" })), "/method");
    const cloudflare = createParams({ executionEnvironment: { kind: "cloudflare-sandbox", bridgeId: "b", sandboxId: "s", cwd: "/w" } });
    expect(tau13.message("client", tauRequest("session.create", cloudflare, "c", 13)).ok).toBe(true);
    const fly = createParams({ executionEnvironment: { kind: "fly-sprite", apiId: "api", spriteName: "box", cwd: "/w" } });
    expect(tau13.message("client", tauRequest("session.create", fly, "f", 13)).ok).toBe(true);
    expectIssueAt(tau13.message("client", tauRequest("session.setAutoCompactThreshold", { sessionId: "s", thresholdTokens: null }, "t", 13)), "/method");
  });

  it("checks client-tool result content as a string in v13 and blocks in v18", () => {
    const stringResult = { sessionId: "s", callId: "c", ok: true, content: "done" };
    expect(tau13.message("client", tauRequest("session.clientTool.result", stringResult, "r", 13)).ok).toBe(true);
    expectIssueAt(tau.message("client", tauRequest("session.clientTool.result", stringResult)), "/params/content");
  });
});

describe("Tau server messages", () => {
  it("validates a response against the result of the request it answers", () => {
    const response = { version: 18, type: "response", id: "r", ok: true, result: { sessions: [{ sessionId: "s", lifecycle: "busy" }] } };
    expect(tau.message("server", response).ok).toBe(true);
    expectIssueAt(tau.message("server", response, "session.list"), "/result/sessions/0/lifecycle");
  });

  it("accepts an error response with a null id and rejects an unknown error code", () => {
    expect(tau.message("server", { version: 18, type: "response", id: null, ok: false, error: { code: "parse_error", message: "x" } }).ok).toBe(true);
    expectIssueAt(tau.message("server", { version: 18, type: "response", id: "r", ok: false, error: { code: "unauthorized", message: "x" } }), "/error/code");
  });

  it("rejects an unknown server message type", () => {
    expectIssueAt(tau.message("server", { version: 18, type: "session.teleport", sessionId: "s" }), "/type");
  });

  it("requires fromRevision on patches to be a positive integer or null", () => {
    const delta = (fromRevision: unknown) => ({
      version: 18,
      type: "session.delta",
      sessionId: "s",
      fromRevision,
      toRevision: 3,
      cause: { type: "configuration" },
      delta: { type: "snapshot.patch", changes: [{ type: "lifecycle.set", lifecycle: "idle" }] },
    });
    expect(tau.message("server", delta(2)).ok).toBe(true);
    expectIssueAt(tau.message("server", delta(0)), "/fromRevision");
  });
});

describe("Ask messages", () => {
  it("accepts requests with or without the jsonrpc member and with extra params", () => {
    expect(ask.message("client", { id: 1, method: "session/send", params: { sessionId: "s", content: "hi", extra: true } }).ok).toBe(true);
    expect(ask.message("client", askRequest("ping")).ok).toBe(true);
    expect(ask.message("client", { id: "x", method: "ping", params: {} }).ok).toBe(true);
  });

  const cases: Array<[string, "client" | "server", unknown, string, string?]> = [
    ["missing sessionId", "client", askRequest("session/resume", {}), "/params/sessionId"],
    ["content not a string", "client", askRequest("session/send", { sessionId: "s", content: 42 }), "/params/content"],
    ["unknown deliveryKind", "client", askRequest("session/subscribe", { sessionId: "s", deliveryKind: "teleport" }), "/params/deliveryKind"],
    ["unknown method", "client", askRequest("session/teleport", {}), "/method"],
    ["jsonrpc other than 2.0", "client", { jsonrpc: "1.0", id: 1, method: "ping" }, "/jsonrpc"],
    ["model.streaming without delta", "server", askEvent("model.streaming", {}), "/params/event/payload/delta"],
    ["turn.failed without turnId", "server", askEvent("turn.failed", { error: "boom" }), "/params/event/payload/turnId"],
    ["unknown event type", "server", askEvent("session.teleported", {}), "/params/event/type"],
    ["requestPermission result with a decision outside its enum", "client", { id: 10001, result: { decision: "maybe" } }, "/result/decision", "interaction/requestPermission"],
    ["session/send result with an unknown status", "server", { id: 3, result: { accepted: true, status: "sent", turnId: "t" } }, "/result/status", "session/send"],
  ];
  it.each(cases)("rejects %s", (_name, sender, message, pointer, respondsTo) => {
    expectIssueAt(ask.message(sender, message, respondsTo), pointer);
  });

  it("tells interaction/requestPermission the query (client → server) from the reverse request (server → client)", () => {
    const query = { id: 7, method: "interaction/requestPermission", params: { sessionId: "s" } };
    const reverse = { id: 10001, method: "interaction/requestPermission", params: { requestId: "r1", toolName: "deploy" } };
    expect(ask.message("client", query).ok).toBe(true);
    expect(ask.message("server", reverse).ok).toBe(true);
    expectIssueAt(ask.message("server", { ...reverse, params: { requestId: "r1" } }), "/params/toolName");
    // Each answer against its own result: the server answers the query, the client the reverse request.
    expect(ask.message("server", { id: 7, result: { mode: "require", pending: false } }, "interaction/requestPermission").ok).toBe(true);
    expectIssueAt(ask.message("server", { id: 7, result: { decision: "allow" } }, "interaction/requestPermission"), "/result/mode");
    expect(ask.message("client", { id: 10001, result: { decision: "allow" } }, "interaction/requestPermission").ok).toBe(true);

    // A transcript with both, bare, each line placed in its direction by its fit.
    const checker = new TranscriptChecker({ dialect: "ask" });
    const lines = [query, reverse, { id: 10001, result: { decision: "deny" } }, { id: 7, result: { mode: "auto", pending: true } }];
    expect(lines.map((line) => checker.line(JSON.stringify(line)))).toEqual(lines.map(() => expect.objectContaining({ ok: true })));
  });

  it("reads params: null as no params, for methods without required params only", () => {
    expect(ask.message("client", { id: 1, method: "ping", params: null }).ok).toBe(true);
    expect(ask.message("client", { id: 2, method: "session/list", params: null }).ok).toBe(true);
    expect(ask.message("client", { id: 3, method: "session/send", params: null }).ok).toBe(false);
  });

  it("accepts every gateway extension event marked in the index", () => {
    const extensions = validators.index.entries.filter((e) => e.dialect === "ask" && e.kind === "event" && e.extension).map((e) => e.name);
    expect(extensions).toEqual(expect.arrayContaining(["input.requested", "input.resolved", "compaction.started", "compaction.completed", "session.reset", "queue.updated", "notice"]));
  });
});
