import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2019 } from "ajv/dist/2019.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SchemaIndex } from "../../src/registry/schema-index.js";
import { readSchemaFile } from "../../src/validation/schema-files.js";
import { ProtocolValidators } from "../../src/validation/validator.js";
import { runCommand } from "../support/cli.js";

/**
 * JSON-RPC 2.0 §5: a response carries exactly one of `result` and `error`. Checked on the schema of
 * every JSON-RPC dialect (every dialect but Tau, whose responses are `ok`-discriminated), through
 * the gateway's validator, through the bundle's own root schema as client CI compiles it, and
 * through `tau-gateway validate`.
 */

type Definition = { properties?: Record<string, unknown>; required?: string[] };

const index = readSchemaFile<SchemaIndex>("index.json");
const jsonRpcBundles = index.bundles.filter((b) => b.dialect !== "tau");
const ask = ProtocolValidators.shared().get("ask");

const both = { jsonrpc: "2.0", id: 1, result: { status: "ok" }, error: { code: -32603, message: "Internal error" } };
const neither = { jsonrpc: "2.0", id: 1 };
const success = { jsonrpc: "2.0", id: 1, result: { status: "ok", version: "1", protocolVersion: "1.0", uptime: 1, sessions: 0 } };
const failure = { jsonrpc: "2.0", id: 1, error: { code: -32603, message: "Internal error" } };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "jsonrpc-responses-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("JSON-RPC responses carry exactly one of result and error", () => {
  it("in every response shape of every JSON-RPC bundle", () => {
    expect(jsonRpcBundles.length).toBeGreaterThan(0);
    for (const bundle of jsonRpcBundles) {
      const defs = readSchemaFile<{ $defs: Record<string, Definition> }>(bundle.schema).$defs;
      // Whole response messages are named `…Response` (a payload type may have `id` and `error` too, as Codex's Turn does).
      const responses = Object.entries(defs).filter(
        ([name, d]) => name.endsWith("Response") && d.properties && "id" in d.properties && ("result" in d.properties || "error" in d.properties),
      );
      // Every method's response, plus the generic success and error shapes.
      expect(responses.length, bundle.schema).toBeGreaterThan(index.entries.filter((e) => e.dialect === bundle.dialect && e.kind === "request").length);
      for (const [name, d] of responses) {
        const [present, absent] = d.required?.includes("result") ? ["result", "error"] : ["error", "result"];
        expect(d.required, `${bundle.schema} ${name}`).toContain(present);
        expect(d.required, `${bundle.schema} ${name}`).not.toContain(absent);
        expect(d.properties![absent], `${bundle.schema} ${name}.${absent}`).toBe(false);
      }
    }
  });

  it("in the gateway's validator, for a method's response, a bare response and a reverse-request answer", () => {
    expect(ask.message("server", success, "ping")).toMatchObject({ ok: true });
    expect(ask.message("server", failure, "ping")).toMatchObject({ ok: true });
    expect(ask.message("server", both, "ping")).toMatchObject({ ok: false, subject: "ping", issues: [{ pointer: "/result", message: "must not be present" }] });
    expect(ask.message("server", both)).toMatchObject({ ok: false, issues: [{ pointer: "/result", message: "must not be present" }] });
    expect(ask.message("server", neither, "ping")).toMatchObject({ ok: false, issues: [{ message: "must have a method (request) or a result or error (response)" }] });
    // An answer to a reverse request, from the client.
    const answer = { id: 10001, result: { decision: "approve" }, error: { code: -32603, message: "x" } };
    expect(ask.message("client", answer, "interaction/requestPermission")).toMatchObject({ ok: false, issues: [{ pointer: "/result" }] });
    expect(ask.message("client", { id: 10001 }, "interaction/requestPermission")).toMatchObject({ ok: false });
  });

  it("in each bundle's root schema, as client CI compiles it", () => {
    for (const bundle of jsonRpcBundles) {
      const ajv = new Ajv2019({ strict: true, allowUnionTypes: true });
      const validate = ajv.compile(readSchemaFile(bundle.schema) as object);
      expect(validate(success), bundle.schema).toBe(true);
      expect(validate(failure), bundle.schema).toBe(true);
      expect(validate(both), bundle.schema).toBe(false);
      expect(validate(neither), bundle.schema).toBe(false);
    }
  });

  it("in `tau-gateway validate`", async () => {
    const path = join(dir, "responses.jsonl");
    const lines = [
      { direction: "client", message: { jsonrpc: "2.0", id: 1, method: "ping" } },
      { direction: "server", message: both },
      { direction: "client", message: { jsonrpc: "2.0", id: 2, method: "ping" } },
      { direction: "server", message: { ...neither, id: 2 } },
      { direction: "client", message: { jsonrpc: "2.0", id: 3, method: "ping" } },
      { direction: "server", message: { ...success, id: 3 } },
    ];
    await writeFile(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const r = await runCommand(["validate", "--dialect", "ask", path]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${path}:2: ask ping: /result: must not be present\n`);
    expect(r.stdout).toContain(`${path}:4: ask: /: must have a method (request) or a result or error (response)\n`);
    expect(r.stdout.endsWith("4 valid, 2 invalid\n")).toBe(true);
  });
});
