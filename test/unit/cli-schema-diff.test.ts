import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommand, repoRoot } from "../support/cli.js";
import { OFFICIAL_SCHEMA_PATH } from "../support/acp-official-schema.js";
import { OFFICIAL_BUNDLE, OFFICIAL_SCHEMA_DIR } from "../support/codex-official-schema.js";

/**
 * `tau-gateway schema diff OLD NEW`, in-process, on real bundles: tau-gateway's own, the official
 * Codex app-server bundle of @openai/codex 0.169.0 (stable and experimental), the official ACP
 * schema; and on copies of them with one change each, made here the way a release would make it.
 */

let dir: string;
const ours = (name: string) => join(repoRoot, "schema", name);
const codexStable = join(OFFICIAL_SCHEMA_DIR, OFFICIAL_BUNDLE);
const codexExperimental = join(OFFICIAL_SCHEMA_DIR, "experimental", OFFICIAL_BUNDLE);
const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

/** A copy of a bundle, changed by `edit`. */
async function edited(from: string, name: string, edit: (bundle: any) => void): Promise<string> {
  const bundle = readJson(from);
  edit(bundle);
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(bundle));
  return path;
}

const diff = async (...args: string[]) => runCommand(["schema", "diff", ...args]);
const lines = (stdout: string) => stdout.trimEnd().split("\n");

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tau-gateway-schema-diff-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("schema diff of a bundle against itself", () => {
  it.each([
    ["tau-gateway's Tau v18", ours("tau-v18.schema.json")],
    ["tau-gateway's Ask", ours("ask-v1.0.schema.json")],
    ["tau-gateway's Codex", ours("codex-v2.schema.json")],
    ["tau-gateway's ACP", ours("acp-v1.schema.json")],
    ["the official Codex 0.169.0 bundle", codexStable],
    ["the official Codex 0.169.0 experimental bundle", codexExperimental],
    ["the official ACP schema", OFFICIAL_SCHEMA_PATH],
  ])("%s is clean", async (_, path) => {
    expect(await diff(path, path)).toEqual({ code: 0, stdout: "0 breaking, 0 additive\n", stderr: "" });
  });
});

describe("schema diff finds what breaks a client", () => {
  it("names a removed method as breaking, and the same method added back as additive", async () => {
    const without = await edited(ours("codex-v2.schema.json"), "no-thread-start.json", (b) => {
      b.$defs.ClientMessage.anyOf = b.$defs.ClientMessage.anyOf.filter((r: any) => r.$ref !== "#/$defs/ThreadStartRequest");
    });
    const removed = await diff(ours("codex-v2.schema.json"), without);
    expect(removed).toEqual({ code: 1, stdout: "breaking request thread/start /: request removed\n1 breaking, 0 additive\n", stderr: "" });
    const added = await diff(without, ours("codex-v2.schema.json"));
    expect(added).toEqual({ code: 0, stdout: "additive request thread/start /: new request\n0 breaking, 1 additive\n", stderr: "" });
  });

  it("names a removed server notification of the official bundle", async () => {
    const without = await edited(codexStable, "no-turn-completed.json", (b) => {
      b.definitions.ServerNotification.oneOf = b.definitions.ServerNotification.oneOf.filter((m: any) => m.properties.method.enum[0] !== "turn/completed");
    });
    const r = await diff("--format", "json", codexStable, without);
    expect(r.code).toBe(1);
    expect(lines(r.stdout).map((l) => JSON.parse(l))).toEqual([
      { severity: "breaking", kind: "server-notification", method: "turn/completed", pointer: "", message: "server notification removed" },
      { breaking: 1, additive: 0, warnings: 0 },
    ]);
  });

  it("a new required param, a narrowed enum and a retyped param are breaking where the client sends them", async () => {
    const changed = await edited(codexStable, "params.json", (b) => {
      const params = b.definitions.v2.ThreadStartParams;
      params.properties.workspaceId = { type: "string" };
      params.required = ["workspaceId"];
      b.definitions.v2.AskForApproval.oneOf[0].enum = ["untrusted", "never"];
      params.properties.ephemeral = { type: ["string", "null"] };
    });
    const r = await diff(codexStable, changed);
    expect(r.code).toBe(1);
    const out = lines(r.stdout);
    expect(out).toContain("breaking request thread/start /params/workspaceId: new required field");
    // AskForApproval is shared by four requests: said once, for the definition, with them.
    expect(out).toContain('breaking AskForApproval /: enum narrowed: no longer accepts "on-request"');
    expect(out[out.indexOf('breaking AskForApproval /: enum narrowed: no longer accepts "on-request"') + 1]).toBe(
      "  reaches 4 methods: requests thread/fork, thread/resume, thread/start, turn/start (e.g. request thread/fork /params/approvalPolicy)",
    );
    expect(out).toContain("breaking request thread/start /params/ephemeral: no longer accepts values of type boolean (retyped: was boolean or null, now string or null)");
    // What the client receives keeps working with the narrower enum: results name approvalPolicy too, and are not flagged.
    expect(out.filter((l) => l.includes("/result/") && l.includes("approvalPolicy"))).toEqual([]);
  });

  it("a removed or retyped result field is breaking, a new one additive", async () => {
    const changed = await edited(codexStable, "result.json", (b) => {
      const thread = b.definitions.v2.Thread;
      delete thread.properties.preview;
      thread.required = thread.required.filter((n: string) => n !== "preview");
      thread.properties.createdAt = { type: "string" };
      thread.properties.colour = { type: "string" };
    });
    const r = await diff(codexStable, changed);
    expect(r.code).toBe(1);
    const out = lines(r.stdout);
    // Thread is in nine results and notifications: each change is said once, for Thread.
    expect(out.filter((l) => !l.startsWith("  "))).toEqual([
      "additive Thread /colour: new field",
      "breaking Thread /createdAt: may now be of type string (retyped: was integer, now string)",
      "breaking Thread /preview: removed",
      "2 breaking, 1 additive",
    ]);
    expect(out[1]).toMatch(/^ {2}reaches 9 methods: requests thread\/fork, thread\/list, .*, thread\/unarchive; server notification thread\/started \(e\.g\. request thread\/fork \/result\/thread\)$/);
  });

  it("the experimental Codex bundle only adds to the stable one (real bundles of one release)", async () => {
    const r = await diff(codexStable, codexExperimental);
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out.every((l) => l.startsWith("additive ") || l.startsWith("  reaches ") || l === out.at(-1))).toBe(true);
    expect(out).toContain("additive request collaborationMode/list /: new request");
    expect(out).toContain("additive request thread/start /params/dynamicTools: new optional field");
    // Going back is breaking: a client written against the experimental API loses methods.
    const back = await diff(codexExperimental, codexStable);
    expect(back.code).toBe(1);
    expect(lines(back.stdout)).toContain("breaking request collaborationMode/list /: request removed");
  });

  it("reads a folder the official generator wrote into", async () => {
    expect((await diff(OFFICIAL_SCHEMA_DIR, OFFICIAL_SCHEMA_DIR)).code).toBe(0);
  });
});

describe("schema diff usage", () => {
  it("exits 2 for wrong arguments, unreadable files and documents that are no bundle", async () => {
    const notBundle = join(dir, "not-a-bundle.json");
    await writeFile(notBundle, JSON.stringify({ type: "object" }));
    const notJson = join(dir, "not-json.json");
    await writeFile(notJson, "{");
    for (const args of [[], ["one"], ["a", "b", "c"], ["--format", "xml", "a", "b"], [join(dir, "missing.json"), notBundle], [notBundle, notBundle], [notJson, notJson]]) {
      const r = await diff(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toMatch(/^tau-gateway schema diff: /);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect((await runCommand(["schema", "bogus"])).code).toBe(2);
    expect((await runCommand(["schema", "--help"])).stdout).toContain("usage: tau-gateway schema diff");
  });
});
