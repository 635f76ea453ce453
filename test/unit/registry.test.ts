import { readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { ServerRequests as AskServerRequests, SessionSendParams } from "../../generated/ask-v1.0.js";
import type { SessionCreateParams, ClientRequests as TauRequests, TurnOutcome } from "../../generated/tau-v18.js";
import { GENERATED_DIRS, generateOutputs } from "../../src/codegen/outputs.js";
import { bundleToTypeScript } from "../../src/codegen/typescript.js";
import { askRegistry, tauRegistry } from "../../src/registry/index.js";
import { readSchemaFile } from "../../src/validation/schema-files.js";
import { ProtocolValidators } from "../../src/validation/validator.js";
import { TAU_V18_METHODS } from "../support/messages.js";

const CHANGE_KINDS = [
  "agent-state.set", "lifecycle.set", "cost.set", "settings.set", "turn.set", "message.append",
  "message.replace", "message.content.append", "timeline.append", "timeline.remove", "timeline.advance",
  "tool.set", "tool.remove", "operation.set", "operation.remove", "agent.set", "agent.remove",
  "facet.set", "facet.remove",
];
const ASK_METHODS = [
  "ping", "initialize", "session/create", "session/list", "session/resume", "session/subscribe",
  "session/events", "session/send", "session/abort", "session/close", "session/setRole", "session/roles", "session/artifacts",
  "session/artifact/get", "interaction/list", "interaction/approve", "interaction/reject",
  "interaction/approve-all", "interaction/reject-all", "interaction/respond", "interaction/requestPermission", "plan/approve",
  "plan/reject", "workspace/readState",
];

const validators = ProtocolValidators.shared();
const entryNames = (dialect: string, kind: string, version: number | string) =>
  validators.index.entries.filter((e) => e.dialect === dialect && e.kind === kind && e.versions.includes(version)).map((e) => e.name);
const packageRoot = fileURLToPath(new URL("../../", import.meta.url));

/** Every file under `dirs` (paths relative to the package root, as generateOutputs keys them) with its text. */
async function committedFiles(dirs: readonly string[]): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const dir of dirs) {
    for (const entry of await readdir(join(packageRoot, dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      files.set(relative(packageRoot, path).split(sep).join("/"), await readFile(path, "utf8"));
    }
  }
  return files;
}


describe("the registry", () => {
  it("has the 30 Tau v18 methods in the order ready advertises them", () => {
    expect(entryNames("tau", "request", 18)).toEqual(TAU_V18_METHODS);
  });

  it("has the v13 surface: goal methods, no auto-compact threshold method", () => {
    const v13 = entryNames("tau", "request", 13);
    expect(v13).toEqual(expect.arrayContaining(["session.startGoal", "session.resumeGoal", "session.clearGoal"]));
    expect(v13).not.toContain("session.setAutoCompactThreshold");
    expect(entryNames("tau", "request", 18)).not.toContain("session.startGoal");
  });

  it("has all 8 Tau server message types and all 8 error codes", () => {
    expect(entryNames("tau", "server-message", 18).sort()).toEqual(
      ["ready", "response", "session.delta", "session.pendingUserMessages", "session.subagentActivities", "session.ephemeral", "session.clientTool.call", "session.clientTool.cancel"].sort(),
    );
    expect(tauRegistry.errors.map((e) => e.code)).toEqual([
      "parse_error", "invalid_request", "method_not_found", "invalid_params", "not_found", "busy", "cancelled", "internal_error",
    ]);
  });

  it("has every delta change kind of the v18 table (and goal.set only in v13)", () => {
    type Def = { $ref?: string; oneOf?: Def[]; anyOf?: Def[]; properties?: { type?: { const?: string } } };
    const kinds = (version: number) => {
      const defs = readSchemaFile<{ $defs: Record<string, Def> }>(`tau-v${version}.schema.json`).$defs;
      const deref = (d: Def): Def => (d.$ref ? deref(defs[d.$ref.split("/").pop()!]!) : d);
      const change = deref(defs.Change!);
      return (change.oneOf ?? change.anyOf ?? []).map((member) => deref(member).properties?.type?.const);
    };
    expect(new Set(kinds(18))).toEqual(new Set(CHANGE_KINDS));
    expect(new Set(kinds(13))).toEqual(new Set([...CHANGE_KINDS, "goal.set"]));
  });

  it("has the 23 Ask methods and the permission query, the session/event notification and both reverse requests", () => {
    expect(entryNames("ask", "request", "1.0")).toEqual(ASK_METHODS);
    expect(entryNames("ask", "notification", "1.0")).toEqual(["session/event"]);
    expect(entryNames("ask", "reverse-request", "1.0").sort()).toEqual(["interaction/requestPermission", "interaction/requestUserInput"]);
  });

  it("has every Ask error code including the gateway-defined ones", () => {
    const codes = Object.fromEntries(askRegistry.errors.map((e) => [e.code, e.extension ?? false]));
    for (const code of [-32700, -32600, -32601, -32602, -32603, -32004, -32005, -32006, -32007, -32008, -32009]) expect(codes[code]).toBe(false);
    for (const code of [-32010, -32012, -32013, -32800]) expect(codes[code]).toBe(true);
  });

  it("marks the gateway's own events as extensions and the Ask host's events as not", () => {
    const events = validators.index.entries.filter((e) => e.dialect === "ask" && e.kind === "event");
    const ext = (name: string) => events.find((e) => e.name === name)?.extension ?? false;
    expect(ext("model.streaming")).toBe(false);
    expect(ext("turn.aborted")).toBe(false);
    expect(ext("queue.updated")).toBe(true);
  });
});

describe("the generated schema", () => {
  // Compiling every definition in ajv strict mode takes seconds: test/e2e/gateway/generated-whole.test.ts.

  // One generation compared with the committed files, which an earlier run wrote: equal bytes mean the
  // output is both up to date and the same from one run to the next (a generation in a process that
  // has used the registry is compared in test/e2e/gateway/generated-whole.test.ts, with the slow tests).
  it("is generated deterministically: a fresh generation is byte for byte the committed schema/ and generated/", async () => {
    const fresh = await generateOutputs();
    const committed = await committedFiles(GENERATED_DIRS);
    const stale = "out of date: run `npm run generate` and commit";
    expect([...fresh.keys()], stale).toEqual([...committed.keys()].sort((a, b) => a.localeCompare(b)));
    for (const [path, content] of fresh) {
      expect(content, `${path} ${stale}`).toBe(committed.get(path));
      expect(content.endsWith("\n") && !content.includes("\r"), path).toBe(true);
    }
  }, 120_000); // a whole generation (json-schema-to-typescript included): tens of seconds on a loaded 2-core machine

  it("emits every type once: a definition naming another is an alias, never a numbered copy", async () => {
    for (const { types } of validators.index.bundles) {
      const code = await readFile(new URL(`../../schema/${types}`, import.meta.url), "utf8");
      expect(code.match(/^export (?:interface|type) [A-Za-z]+[0-9]+\b.*$/gm) ?? [], types).toEqual([]);
      if (types.includes("tau-")) expect(code, types).toContain("export type SessionSnapshotResult = Snapshot;");
    }
  });

  it("refuses a $ref with a description beside it inside a definition (it would generate a duplicate type)", async () => {
    const bundle = (property: object) => ({
      dialect: "tau" as const,
      version: 18,
      baseName: "tau-v18",
      schema: {
        anyOf: [{ $ref: "#/$defs/Outer" }],
        $defs: {
          Inner: { title: "Inner", type: "object", properties: { a: { type: "string" } } },
          Outer: { title: "Outer", type: "object", properties: { inner: property } },
        },
      },
    });
    await expect(bundleToTypeScript(bundle({ $ref: "#/$defs/Inner" }))).resolves.toContain("inner?: Inner;");
    await expect(bundleToTypeScript(bundle({ description: "The inner one.", $ref: "#/$defs/Inner" }))).rejects.toThrow(
      "#/$defs/Outer/properties/inner: $ref beside description would generate a duplicate type",
    );
  });

  it("maps every method, message and event of a bundle by wire name, per direction", async () => {
    const mapKeys = (code: string, name: string) => {
      if (code.includes(`\nexport interface ${name} {}\n`)) return [];
      const body = code.match(new RegExp(`^export interface ${name} \\{\\n([\\s\\S]*?)^\\}`, "m"))?.[1];
      if (body === undefined) throw new Error(`no map ${name}`);
      return [...body.matchAll(/^ {2}("[^"]+"|[A-Za-z_$][\w$]*):/gm)].map((m) => m[1]!.replace(/^"|"$/g, "")).sort();
    };
    const entries = (dialect: string, version: number | string, kind: string, direction?: string) =>
      validators.index.entries
        .filter((e) => e.dialect === dialect && e.versions.includes(version) && e.kind === kind && (!direction || e.direction === direction))
        .map((e) => e.name)
        .sort();
    for (const { dialect, version, types } of validators.index.bundles) {
      const code = await readFile(new URL(`../../schema/${types}`, import.meta.url), "utf8");
      expect(mapKeys(code, "ClientRequests"), types).toEqual(entries(dialect, version, "request"));
      expect(mapKeys(code, "ServerRequests"), types).toEqual(entries(dialect, version, "reverse-request"));
      expect(mapKeys(code, "ClientNotifications"), types).toEqual(entries(dialect, version, "notification", "client-to-server"));
      expect(mapKeys(code, "ServerNotifications"), types).toEqual(entries(dialect, version, "notification", "server-to-client"));
      expect(mapKeys(code, "ServerMessages"), types).toEqual(entries(dialect, version, "server-message"));
      expect(mapKeys(code, "Events"), types).toEqual(entries(dialect, version, "event"));
    }
    expect(entries("ask", "1.0", "reverse-request")).toEqual(["interaction/requestPermission", "interaction/requestUserInput"]);
  });

  it("gives TypeScript types that describe the wire shapes", () => {
    // Compile-time checks: these assignments fail `npm run typecheck` if the types drift.
    const create: SessionCreateParams = { executionEnvironment: { kind: "local", cwd: "/tmp" }, attributes: {} };
    const outcome: TurnOutcome = { status: "blocked", reason: "auto-compaction-failed", message: "x" };
    const send: SessionSendParams = { sessionId: "s", content: "hi" };
    const submitted: TauRequests["session.submit"]["result"] = { userHistoryEntryId: "h", turn: outcome };
    const permission: AskServerRequests["interaction/requestPermission"]["result"] = { decision: "allow_once" };
    expect([create, outcome, send, submitted, permission].every((v) => typeof v === "object")).toBe(true);
  });
});
