import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2019, type ValidateFunction } from "ajv/dist/2019.js";
import { describe, expect, it } from "vitest";
import { withDiscriminators } from "../../src/codegen/discriminated-unions.js";
import { FAST_AJV_OPTIONS } from "../../src/codegen/fast-validators.js";
import type { IndexBundle, IndexEntry } from "../../src/registry/schema-index.js";
import { loadFastChecks } from "../../src/validation/precompiled.js";
import { readSchemaFile } from "../../src/validation/schema-files.js";
import { AJV_OPTIONS, ProtocolValidators } from "../../src/validation/validator.js";
import { askEvent, askRequest, createParams, tauRequest } from "../support/messages.js";

/**
 * The fast tier (first error only, unions dispatched on their tag) must accept exactly what the
 * detailed tier, compiled from the schema as generated, accepts: checked on real example messages
 * and on every small mutation of them (a field removed, a value of another type, a tag swapped for
 * another kind's), each against the definition the message is dispatched to. The fast tier the
 * gateway runs is precompiled at generate time (generated/validators/); it is compared both with
 * the same options compiled here, at run time, and with the detailed tier.
 */

interface Bundle {
  $id: string;
  $defs: Record<string, unknown>;
}

const index = readSchemaFile<{ bundles: IndexBundle[] }>("index.json");
const bundles = new Map(index.bundles.map((b) => [`${b.dialect}@${b.version}`, readSchemaFile<Bundle>(b.schema)]));
const precompiledFiles = new Map(index.bundles.map((b) => [`${b.dialect}@${b.version}`, b.validators]));

function tiers(bundleKey: string) {
  const { $id, $defs } = bundles.get(bundleKey)!;
  const fast = new Ajv2019(FAST_AJV_OPTIONS);
  fast.addSchema(withDiscriminators({ $id, $defs }));
  const detailed = new Ajv2019(AJV_OPTIONS);
  detailed.addSchema({ $id, $defs });
  const precompiled = loadFastChecks(precompiledFiles.get(bundleKey)!);
  const get = (ajv: Ajv2019, name: string) => ajv.getSchema(`${$id}#/$defs/${name}`) as ValidateFunction;
  return { fast: (name: string) => get(fast, name), detailed: (name: string) => get(detailed, name), precompiled: (name: string) => precompiled.get(name)! };
}

const validators = () => ProtocolValidators.shared();

const fixtureLines = (path: string) =>
  readFileSync(fileURLToPath(new URL(`../fixtures/${path}`, import.meta.url)), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { direction: "client" | "server"; message: Record<string, unknown> });

/** Every string found under each key name in the corpus: tag values to swap in. */
function stringsByKey(values: unknown[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (typeof v !== "object" || v === null) return;
    for (const [k, x] of Object.entries(v)) {
      if (typeof x === "string" && x.length < 40) (out.get(k) ?? out.set(k, new Set()).get(k)!).add(x);
      walk(x);
    }
  };
  values.forEach(walk);
  return out;
}

/** Copies of `value` each differing in one place. */
function* mutations(value: unknown, tags: Map<string, Set<string>>): Generator<unknown> {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) for (const m of mutations(value[i], tags)) yield value.map((x, j) => (j === i ? m : x));
    if (value.length) yield value.slice(1);
    return;
  }
  if (typeof value !== "object" || value === null) return;
  const record = value as Record<string, unknown>;
  for (const [key, x] of Object.entries(record)) {
    const { [key]: _removed, ...without } = record;
    yield without;
    const replacements: unknown[] = [null, -1, 1.5, "", " ", true, {}, [{}]];
    if (typeof x === "string") replacements.push(...(tags.get(key) ?? []), "unknown.kind");
    for (const r of replacements) if (r !== x) yield { ...record, [key]: r };
    for (const m of mutations(x, tags)) yield { ...record, [key]: m };
  }
  yield { ...record, extra: "field" };
}

function compare(bundleKey: string, messages: Array<{ direction: "client" | "server"; message: unknown; respondsTo?: string }>) {
  const [dialect, version] = bundleKey.split("@") as [string, string];
  const validator = ProtocolValidators.shared().get(dialect as "tau" | "ask" | "codex" | "acp", dialect === "tau" ? Number(version) : version);
  const { fast, detailed, precompiled } = tiers(bundleKey);
  const tags = stringsByKey(messages.map((m) => m.message));
  let checked = 0;
  const disagreements: string[] = [];
  for (const { direction, message, respondsTo } of messages) {
    const definition = validator.message(direction, message, respondsTo).definition;
    expect(definition, JSON.stringify(message).slice(0, 200)).toBeDefined();
    for (const candidate of [message, ...mutations(message, tags)]) {
      const a = fast(definition!)(candidate);
      const b = detailed(definition!)(candidate);
      const c = precompiled(definition!)(candidate);
      checked++;
      if (a !== b || c !== a) disagreements.push(`${definition}: fast ${a}, detailed ${b}, precompiled ${c}: ${JSON.stringify(candidate).slice(0, 300)}`);
    }
  }
  expect(disagreements.slice(0, 5)).toEqual([]);
  return checked;
}

/** Pairs each response of a transcript with the method of the request it answers. */
function withMethods(lines: Array<{ direction: "client" | "server"; message: Record<string, unknown> }>) {
  const methods = new Map<unknown, string>();
  return lines.map(({ direction, message }) => {
    if (message.type === "request") methods.set(message.id, message.method as string);
    const respondsTo = message.type === "response" ? methods.get(message.id) : undefined;
    return { direction, message, respondsTo };
  });
}

/** The precompiled modules a fresh process has loaded after checking `messages` (a fresh process: the require cache is per process). */
function loadedAfter(checks: string): string[] {
  // Every file read is seen (the modules are read, then compiled with their code cache).
  const script = `
    import fs from "node:fs";
    import { syncBuiltinESMExports } from "node:module";
    const loaded = new Set();
    const read = fs.readFileSync;
    fs.readFileSync = function (path, ...rest) {
      if (String(path).includes("/generated/validators/")) loaded.add(String(path).split("/").pop());
      return read.call(this, path, ...rest);
    };
    syncBuiltinESMExports();
    const { ProtocolValidators } = await import("./src/validation/validator.ts");
    const validators = new ProtocolValidators();
    ${checks}
    console.log(JSON.stringify([...loaded]));`;
  const root = fileURLToPath(new URL("../..", import.meta.url));
  return JSON.parse(execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: root, encoding: "utf8" })) as string[];
}

describe("the fast validation tier", () => {
  it("loads a bundle's precompiled checks when the bundle is first used, not before", () => {
    expect(loadedAfter("")).toEqual([]);
    const tauRequest = `{ version: 18, type: "request", id: "1", method: "session.list", params: {} }`;
    expect(loadedAfter(`validators.get("tau").message("client", ${tauRequest});`)).toEqual(["tau-v18.cjs"]);
    expect(loadedAfter(`validators.get("tau", 13).message("client", { ...${tauRequest}, version: 13 }); validators.get("codex").hasDefinition("ThreadStartParams");`).sort()).toEqual(["codex-v2.cjs", "tau-v13.cjs"]);
  });

  it("compiles every definition of every bundle, and precompiled exactly those", () => {
    for (const [key, bundle] of bundles) {
      const { fast } = tiers(key);
      for (const name of Object.keys(bundle.$defs)) expect(fast(name), `${key} ${name}`).toBeTypeOf("function");
      const precompiled = loadFastChecks(precompiledFiles.get(key)!);
      expect([...precompiled.keys()].sort(), key).toEqual(Object.keys(bundle.$defs).sort());
      for (const check of precompiled.values()) expect(check).toBeTypeOf("function");
    }
  });

  it("has every Tau request's definition accept only what RequestEnvelope accepts (a valid request is checked once)", () => {
    const index = readSchemaFile<{ bundles: IndexBundle[]; entries: IndexEntry[] }>("index.json");
    const objectsOnly = (defs: Record<string, unknown>, schema: Record<string, unknown>): boolean => {
      if (typeof schema.$ref === "string") return objectsOnly(defs, defs[schema.$ref.replace("#/$defs/", "")] as Record<string, unknown>);
      const branches = (schema.oneOf ?? schema.anyOf) as Array<Record<string, unknown>> | undefined;
      return schema.type === "object" || (branches !== undefined && branches.every((b) => objectsOnly(defs, b)));
    };
    let requests = 0;
    for (const bundle of index.bundles.filter((b) => b.dialect === "tau")) {
      const { $defs } = bundles.get(`tau@${bundle.version}`)!;
      const envelope = $defs.RequestEnvelope as { properties: Record<string, unknown>; required: string[] };
      for (const entry of index.entries.filter((e) => e.dialect === "tau" && e.kind === "request" && e.versions.includes(bundle.version))) {
        const name = entry.definitions.request!;
        const definition = $defs[name] as { type: string; properties: Record<string, Record<string, unknown>>; required: string[] };
        const where = `tau@${bundle.version} ${name}`;
        expect(definition.type, where).toBe("object");
        expect(definition.required, where).toEqual(expect.arrayContaining(envelope.required));
        for (const member of ["version", "type", "id"]) expect(definition.properties[member], `${where} ${member}`).toEqual(envelope.properties[member]);
        expect(definition.properties.method, where).toMatchObject({ type: "string", const: entry.name });
        expect(objectsOnly($defs, definition.properties.params!), `${where} params`).toBe(true);
        requests++;
      }
    }
    expect(requests).toBeGreaterThan(50);
  });

  it("dispatches tagged unions on their tag and leaves the generated schema alone", () => {
    const tau = bundles.get("tau@18")!;
    const before = JSON.stringify(tau);
    const fast = withDiscriminators(tau);
    expect(JSON.stringify(tau)).toBe(before);
    expect(fast.$defs.Change).toMatchObject({ discriminator: { propertyName: "type" }, type: "object" });
    expect(fast.$defs.DeltaCause).toMatchObject({ discriminator: { propertyName: "type" } });
    // An anyOf whose branches have distinct tags is a oneOf.
    const ask = withDiscriminators(bundles.get("ask@1.0")!);
    expect(ask.$defs.Event).toMatchObject({ discriminator: { propertyName: "type" }, oneOf: expect.any(Array) });
    expect(ask.$defs.Event).not.toHaveProperty("anyOf");
    // Branches told apart by a boolean (ok: true | false) are not a tagged union.
    expect(fast.$defs.ResponseMessage).not.toHaveProperty("discriminator");
  });

  it("leaves unions whose tags repeat, are not required or are not all strings as they are", () => {
    const branch = (tag: unknown, required = true) => ({ type: "object", properties: { kind: { const: tag } }, ...(required ? { required: ["kind"] } : {}) });
    const schema = (...branches: unknown[]) => ({ $id: "urn:test", $defs: { U: { oneOf: branches } } });
    expect(withDiscriminators(schema(branch("a"), branch("a"))).$defs.U).not.toHaveProperty("discriminator");
    expect(withDiscriminators(schema(branch("a"), branch("b", false))).$defs.U).not.toHaveProperty("discriminator");
    expect(withDiscriminators(schema(branch("a"), branch(1))).$defs.U).not.toHaveProperty("discriminator");
    expect(withDiscriminators(schema(branch("a"), branch("constructor"))).$defs.U).not.toHaveProperty("discriminator");
    expect(withDiscriminators(schema(branch("a"), { properties: { kind: { const: "b" } }, required: ["kind"] })).$defs.U).not.toHaveProperty("discriminator");
    expect(withDiscriminators(schema(branch("a"), branch("b"))).$defs.U).toMatchObject({ discriminator: { propertyName: "kind" } });
  });

  it("accepts exactly what the detailed tier accepts: Tau v18 examples and their mutations", () => {
    const examples = withMethods(fixtureLines("seed-001/examples-v18.jsonl"));
    const extra = [
      { direction: "client" as const, message: tauRequest("session.create", createParams({ attributes: { source: "sdk" } })) },
      {
        direction: "server" as const,
        message: {
          version: 18,
          type: "session.delta",
          sessionId: "s-1",
          fromRevision: 5,
          toRevision: 6,
          cause: { type: "assistant-stream" },
          delta: { type: "snapshot.patch", changes: [{ type: "message.content.append", messageId: "m-1", text: "abcdefgh", timestamp: 1700000000000 }] },
        },
      },
    ];
    expect(compare("tau@18", [...examples, ...extra])).toBeGreaterThan(3_000);
  });

  it("accepts exactly what the detailed tier accepts: Tau v13 examples and their mutations", () => {
    // The few 7–9 KB snapshots left out: mutating every place of each costs more than it covers (v18's snapshots are checked).
    const examples = withMethods(fixtureLines("seed-000/examples-v13.jsonl")).filter((m) => JSON.stringify(m.message).length < 4096);
    expect(compare("tau@13", examples)).toBeGreaterThan(10_000);
  });

  it("accepts exactly what the detailed tier accepts: Ask messages and their mutations", () => {
    const messages = [
      { direction: "client" as const, message: askRequest("session/send", { sessionId: "s-1", content: "hello" }) },
      { direction: "server" as const, message: askEvent("model.streaming", { delta: "You said" }) },
      { direction: "server" as const, message: askEvent("turn.completed", { turnId: "t-1", response: "done", inputTokens: 2, outputTokens: 4, cost: 0.000006 }) },
      { direction: "server" as const, message: askEvent("tool.use", { id: "c-1", name: "bash", args: { command: "ls" } }) },
      { direction: "server" as const, message: askEvent("session.reset", { cause: "compaction" }) },
    ];
    expect(compare("ask@1.0", messages)).toBeGreaterThan(400);
  });

  it("accepts exactly what the detailed tier accepts: Codex app-server and ACP messages and their mutations", () => {
    const codex = validators().get("codex");
    const acp = validators().get("acp");
    type Line = { direction: "client" | "server"; message: Record<string, unknown>; respondsTo?: string };
    const codexMessages: Line[] = [
      { direction: "client" as const, message: { id: 1, method: "turn/start", params: { threadId: "t", input: [{ type: "text", text: "hi" }] } } },
      { direction: "server" as const, message: { method: "item/agentMessage/delta", params: { threadId: "t", turnId: "u", itemId: "m", delta: "Hi" } } },
      { direction: "server" as const, message: { id: 0, method: "item/commandExecution/requestApproval", params: { threadId: "t", turnId: "u", itemId: "c", startedAtMs: 1 } } },
      { direction: "client" as const, message: { id: 0, result: { decision: "acceptForSession" } }, respondsTo: "item/commandExecution/requestApproval" },
      { direction: "server" as const, message: { method: "item/started", params: { threadId: "t", turnId: "u", item: { type: "agentMessage", id: "m", text: "" }, startedAtMs: 1 } } },
      {
        direction: "server" as const,
        message: {
          method: "item/completed",
          params: { threadId: "t", turnId: "u", item: { type: "commandExecution", id: "c", command: "ls", cwd: "/", status: "completed", commandActions: [] }, completedAtMs: 2 },
        },
      },
      { direction: "server" as const, message: { method: "turn/completed", params: { threadId: "t", turn: { id: "u", items: [], status: "completed" } } } },
    ];
    const update = (u: object): Line => ({ direction: "server", message: { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: u } } });
    const acpMessages: Line[] = [
      { direction: "client" as const, message: { jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [{ type: "text", text: "hi" }] } } },
      {
        direction: "server" as const,
        message: { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hello" } } } },
      },
      { direction: "server" as const, message: { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } }, respondsTo: "session/prompt" },
      update({ sessionUpdate: "current_mode_update", currentModeId: "auto" }),
      update({ sessionUpdate: "tool_call", toolCallId: "c1", title: "ls", kind: "execute", status: "pending", content: [{ type: "content", content: { type: "text", text: "x" } }] }),
      update({ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed" }),
      update({ sessionUpdate: "plan", entries: [{ content: "step", priority: "high", status: "pending" }] }),
      update({ sessionUpdate: "usage_update", used: 10, size: 1000 }),
      update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } }),
    ];
    for (const { direction, message, respondsTo } of codexMessages) expect(codex.message(direction, message, respondsTo).ok).toBe(true);
    for (const { direction, message, respondsTo } of acpMessages) expect(acp.message(direction, message, respondsTo).ok).toBe(true);
    expect(compare(`codex@${codex.version}`, codexMessages)).toBeGreaterThan(500);
    expect(compare(`acp@${acp.version}`, acpMessages)).toBeGreaterThan(500);
  });
});
