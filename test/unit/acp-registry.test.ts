import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { runValidate } from "../../src/cli/validate.js";
import { acpRegistry } from "../../src/registry/index.js";
import { paramsName, resultName } from "../../src/registry/names.js";
import { readSchemaFile } from "../../src/validation/schema-files.js";
import { ProtocolValidators } from "../../src/validation/validator.js";
import { agentMessageProblems, officialSchema } from "../support/acp-official-schema.js";

type Schema = Record<string, unknown>;

/**
 * The ACP registry against the official schema the SDK ships: every shared type it defines has the
 * official name and, keyword for keyword, the official shape (descriptions and the schema
 * generator's annotations aside); every method's params and result are the official ones; and
 * every official method is either in the registry or listed here with the reason it is not.
 */

/** Official methods the gateway does not take part in, and why. */
const NOT_SUPPORTED: Record<string, string> = {
  logout: "no auth methods are advertised, so there is nothing to log out of",
  "session/delete": "Tau has no session deletion",
  "session/set_config_option": "no configuration options are offered; modes cover the approval mode",
  "fs/read_text_file": "Tau's tools read files in Tau's own environment",
  "fs/write_text_file": "Tau's tools write files in Tau's own environment",
  "terminal/create": "Tau runs commands in its own environment",
  "terminal/output": "Tau runs commands in its own environment",
  "terminal/release": "Tau runs commands in its own environment",
  "terminal/wait_for_exit": "Tau runs commands in its own environment",
  "terminal/kill": "Tau runs commands in its own environment",
  "elicitation/complete": "only form elicitation is used",
};

/** Keywords that document rather than constrain, or that only the official generator reads. */
const ANNOTATIONS = new Set(["description", "title", "default", "format", "discriminator"]);

/** A schema reduced to what it constrains: annotations dropped, single-member allOf wrappers unwrapped, required lists sorted. */
function constraints(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(constraints);
  if (node === null || typeof node !== "object") return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node as Schema)) {
    if (ANNOTATIONS.has(key) || key.startsWith("x-")) continue;
    if (key === "properties") out[key] = Object.fromEntries(Object.entries(value as Schema).map(([name, v]) => [name, constraints(v)]));
    else if (key === "required") out[key] = [...(value as string[])].sort();
    else out[key] = constraints(value);
  }
  const keys = Object.keys(out);
  if (keys.length === 1 && keys[0] === "allOf" && (out.allOf as unknown[]).length === 1) return (out.allOf as unknown[])[0];
  return out;
}

const ours = readSchemaFile<{ $defs: Record<string, Schema> }>("acp-v1.schema.json").$defs;
const official = officialSchema.$defs;
/** Official definitions of one method's params or result: `x-side` names who handles the method. */
const officialFor = (method: string, side: "agent" | "client", suffix: "Request" | "Response" | "Notification") =>
  Object.entries(official).find(([name, d]) => d["x-method"] === method && (d["x-side"] === side || d["x-side"] === "protocol") && name.endsWith(suffix));

describe("the ACP registry", () => {
  it("names every shared type as the official schema does and gives it the official shape", () => {
    const gatewayOnly = ["JsonRpcVersion", "SuccessResponse", "ErrorResponse"];
    const names = Object.keys(acpRegistry.definitions);
    expect(names.filter((n) => !(n in official) && !gatewayOnly.includes(n))).toEqual([]);
    const compared = names.filter((n) => n in official);
    expect(compared.length).toBeGreaterThan(100);
    for (const name of compared) expect({ name, schema: constraints(ours[name]) }).toEqual({ name, schema: constraints(official[name]) });
  });

  it("has the official params and result for every method and notification", () => {
    for (const m of acpRegistry.methods) {
      const side = m.sender === "client" ? "agent" : "client";
      const params = officialFor(m.name, side, "Request");
      const result = officialFor(m.name, side, "Response");
      expect(params, `${m.name} params`).toBeDefined();
      expect(result, `${m.name} result`).toBeDefined();
      expect({ method: m.name, params: constraints(ours[paramsName(m.name)]) }).toEqual({ method: m.name, params: constraints(params![1]) });
      expect({ method: m.name, result: constraints(ours[resultName(m.name)]) }).toEqual({ method: m.name, result: constraints(result![1]) });
    }
    for (const n of acpRegistry.notifications) {
      const params = officialFor(n.name, n.sender === "client" ? "agent" : "client", "Notification");
      expect(params, `${n.name} params`).toBeDefined();
      expect({ method: n.name, params: constraints(ours[paramsName(n.name)]) }).toEqual({ method: n.name, params: constraints(params![1]) });
    }
  });

  it("covers every official method: in the registry, or listed as not supported", () => {
    const officialMethods = new Set(Object.values(official).flatMap((d) => (typeof d["x-method"] === "string" ? [d["x-method"]] : [])));
    const registered = [...acpRegistry.methods, ...acpRegistry.notifications].map((e) => e.name);
    expect([...officialMethods].sort()).toEqual([...registered, ...Object.keys(NOT_SUPPORTED)].sort());
  });

  it("validates ACP messages: the official worked example passes, the documentation's known mistakes fail", () => {
    const acp = ProtocolValidators.shared().get("acp");
    expect(acp.message("client", { jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/home/u/proj", mcpServers: [{ name: "fs", command: "/usr/bin/mcp-fs", args: ["--stdio"], env: [] }] } }).ok).toBe(true);
    expect(acp.message("server", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "current_mode_update", currentModeId: "auto" } } }).ok).toBe(true);
    const modeId = acp.message("server", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "current_mode_update", modeId: "auto" } } });
    expect(modeId.ok).toBe(false);
    expect(acp.message("server", { jsonrpc: "2.0", id: 5, result: null }, "session/load").ok).toBe(false);
    expect(acp.message("server", { jsonrpc: "2.0", id: 5, result: {} }, "session/load").ok).toBe(true);
    // jsonrpc is required in ACP (Ask tolerates its absence).
    expect(acp.message("client", { id: 1, method: "session/list", params: {} }).ok).toBe(false);
  });
});

describe("the official-schema check the ACP tests use", () => {
  const prompt = { jsonrpc: "2.0", id: 7, method: "session/prompt", params: { sessionId: "s", prompt: [{ type: "text", text: "hi" }] } };
  const update = (u: object) => ({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: u } });

  it("accepts what the official schema accepts", () => {
    const sent = [update({ sessionUpdate: "current_mode_update", currentModeId: "auto" }), { jsonrpc: "2.0", id: 7, result: { stopReason: "end_turn" } }];
    expect(agentMessageProblems(sent, [prompt])).toEqual([]);
  });

  it("checks params and results by method, which the schema's root alone does not", () => {
    const problems = agentMessageProblems(
      [
        update({ sessionUpdate: "current_mode_update", modeId: "auto" }),
        { jsonrpc: "2.0", id: 7, result: null },
        { jsonrpc: "2.0", id: 8, result: {} },
        { id: 9, error: { code: -32600, message: "x" } },
      ],
      [prompt],
    );
    expect(problems).toHaveLength(4);
    expect(problems[0]).toMatch(/SessionNotification/);
    expect(problems[1]).toMatch(/PromptResponse/);
    expect(problems[2]).toMatch(/answers no request/);
  });
});

describe("tau-gateway validate --dialect acp", () => {
  async function validate(lines: unknown[]) {
    let stdout = "";
    const stdin = Readable.from([lines.map((l) => JSON.stringify(l)).join("\n") + "\n"]);
    const code = await runValidate(["--dialect", "acp", "-"], { stdin, stdout: (t) => void (stdout += t), stderr: () => undefined });
    return { code, stdout };
  }

  it("checks requests, responses by their request's method, and notifications", async () => {
    const transcript = [
      { direction: "client", message: { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1 } } },
      { direction: "server", message: { jsonrpc: "2.0", id: 0, result: { protocolVersion: 1, agentCapabilities: { loadSession: true } } } },
      { direction: "client", message: { jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [{ type: "text", text: "hi" }] } } },
      { direction: "server", message: { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hello" } } } } },
      { direction: "server", message: { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } } },
    ];
    expect(await validate(transcript)).toEqual({ code: 0, stdout: "5 valid, 0 invalid\n" });
    const broken = [
      transcript[2],
      { direction: "server", message: { jsonrpc: "2.0", id: 1, result: { stopReason: "length" } } },
    ];
    const { code, stdout } = await validate(broken);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^<stdin>:2: acp session\/prompt: \/result\/stopReason: /m);
  });
});
