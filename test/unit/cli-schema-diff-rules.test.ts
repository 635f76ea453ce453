import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { matchCodexResults } from "../../src/cli/schema-diff/codex-results.js";
import { runCommand } from "../support/cli.js";

/**
 * `tau-gateway schema diff`, one rule at a time, on small bundles made here in the official Codex
 * layout (ClientRequest / ServerRequest / ServerNotification unions, definitions under v2, results
 * found by the names Codex gives them).
 */

type Schema = Record<string, unknown>;
const ref = (name: string) => ({ $ref: `#/definitions/v2/${name}` });
const nullable = (name: string) => ({ anyOf: [ref(name), { type: "null" }] });
const str = { type: "string" };
const object = (properties: Record<string, unknown>, required: string[] = []): Schema => ({ type: "object", properties, required });

interface Parts {
  /** Client requests: method → the params definition's name, or null for none. */
  requests?: Record<string, string | null>;
  serverRequests?: Record<string, string>;
  notifications?: Record<string, string>;
  /** Properties beside the ServerNotification union's oneOf. */
  envelope?: Record<string, unknown>;
  defs: Record<string, unknown>;
}

const member = (method: string, params: string | null, request: boolean) => ({
  type: "object",
  title: `${method}Request`,
  properties: { ...(request ? { id: { type: ["string", "integer"] } } : {}), method: { type: "string", enum: [method] }, params: params === null ? { type: "null" } : ref(params) },
  required: request ? ["id", "method"] : ["method"],
});

function codexBundle(parts: Parts): Schema {
  const members = (entries: Record<string, string | null> | undefined, request: boolean) => Object.entries(entries ?? {}).map(([m, p]) => member(m, p, request));
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    definitions: {
      ClientRequest: { oneOf: members(parts.requests, true) },
      ClientNotification: { oneOf: [] },
      ServerRequest: { oneOf: members(parts.serverRequests, true) },
      ServerNotification: { oneOf: members(parts.notifications, false), ...(parts.envelope ? { properties: parts.envelope } : {}) },
      v2: parts.defs,
    },
  };
}

let dir: string;
let count = 0;
beforeAll(async () => void (dir = await mkdtemp(join(tmpdir(), "tau-gateway-schema-diff-rules-"))));
afterAll(() => rm(dir, { recursive: true, force: true }));

async function file(content: string | Schema): Promise<string> {
  const path = join(dir, `${++count}.json`);
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

async function diff(before: Parts, after: Parts, ...flags: string[]) {
  return runCommand(["schema", "diff", ...flags, await file(codexBundle(before)), await file(codexBundle(after))]);
}
const lines = (stdout: string) => stdout.trimEnd().split("\n");

/** A thread item union shared by a request's result and two notifications. */
const item = (message: Schema) => ({
  Item: { oneOf: [object({ type: { type: "string", enum: ["agentMessage"] }, text: str, moderation: nullable("Moderation") }, ["type", "text"]), object({ type: { type: "string", enum: ["reasoning"] } }, ["type"])] },
  Moderation: object({ display: nullable("Display") }),
  Display: message,
  TurnStartParams: object({ threadId: str }, ["threadId"]),
  TurnStartResponse: object({ items: { type: "array", items: ref("Item") } }, ["items"]),
  ItemNotification: object({ item: ref("Item") }, ["item"]),
});
const shared = (display: Schema): Parts => ({
  requests: { "turn/start": "TurnStartParams" },
  notifications: { "item/started": "ItemNotification", "item/completed": "ItemNotification" },
  defs: item(display),
});
const oldDisplay = object({ action: str, blockType: str }, ["action"]);

describe("a change to a shared definition", () => {
  it("is said once, for the definition, with every method it reaches", async () => {
    const r = await diff(shared(oldDisplay), shared(object({ action: str, colour: str }, ["action"])));
    expect(r).toEqual({
      code: 1,
      stdout: [
        "breaking Display /blockType: removed",
        "  reaches 3 methods: request turn/start; server notifications item/completed, item/started (e.g. server-notification item/completed /params/item/moderation/display)",
        "additive Display /colour: new field",
        "  reaches 3 methods: request turn/start; server notifications item/completed, item/started (e.g. server-notification item/completed /params/item/moderation/display)",
        "1 breaking, 1 additive",
        "",
      ].join("\n"),
      stderr: "",
    });
    const json = await diff(shared(oldDisplay), shared(object({ action: str }, ["action"])), "--format", "json");
    expect(lines(json.stdout).map((l) => JSON.parse(l))).toEqual([
      {
        severity: "breaking",
        definition: "Display",
        pointer: "/blockType",
        message: "removed",
        methods: [
          { kind: "request", method: "turn/start", pointer: "/result/items/*/moderation/display" },
          { kind: "server-notification", method: "item/completed", pointer: "/params/item/moderation/display" },
          { kind: "server-notification", method: "item/started", pointer: "/params/item/moderation/display" },
        ],
      },
      { breaking: 1, additive: 0, warnings: 0 },
    ]);
  });

  it("one object that became a union on a new tag is one change, naming what went and came per variant", async () => {
    const union = {
      oneOf: [
        object({ mode: { type: "string", enum: ["show"] }, version: { type: "integer", enum: [1] }, annotation: str }, ["mode", "version"]),
        object({ mode: { type: "string", enum: ["hide"] }, version: { type: "integer", enum: [1] }, replacement: str }, ["mode", "version", "replacement"]),
      ],
    };
    const r = await diff(shared(oldDisplay), shared(union));
    expect(r.code).toBe(1);
    expect(lines(r.stdout)).toEqual([
      'breaking Display /: now a union on mode ("show", "hide"), was one object: removed action, blockType; new mode, version, annotation (mode "show"), replacement (mode "hide")',
      "  reaches 3 methods: request turn/start; server notifications item/completed, item/started (e.g. server-notification item/completed /params/item/moderation/display)",
      "1 breaking, 0 additive",
    ]);
  });

  it("reached by one method only, is said for that method at the full pointer, in the variant it is in", async () => {
    const one = (display: Schema): Parts => ({ ...shared(display), notifications: {} });
    const r = await diff(one(oldDisplay), one(object({ action: str }, ["action"])));
    expect(r.stdout).toBe('breaking request turn/start /result/items/*/moderation/display/blockType: removed (type "agentMessage")\n1 breaking, 0 additive\n');
  });
});

describe("results are matched by the names the bundle gives them", () => {
  const results = (version: Schema): Parts => ({
    requests: { "configRequirements/read": null, "account/logout": null, "account/rateLimits/read": null, "thread/start": "ThreadStartParams" },
    defs: {
      ThreadStartParams: object({}),
      ThreadStartResponse: object({ version }),
      ConfigRequirementsReadResponse: object({ version }),
      LogoutAccountResponse: object({ version }),
      GetAccountRateLimitsResponse: object({ version }),
    },
  });

  it("after the params, after the method, and by the same words in another order (get for read)", async () => {
    const r = await diff(results(str), results({ type: "integer" }));
    expect(r.stderr).toBe("");
    // Each result's `version` is retyped; ThreadStartResponse would be the only one without the names.
    const breaking = lines(r.stdout).filter((l) => l.startsWith("breaking"));
    expect(breaking.map((l) => l.split(" ").slice(1, 4).join(" "))).toEqual([
      "request account/logout /result/version:",
      "request account/rateLimits/read /result/version:",
      "request configRequirements/read /result/version:",
      "request thread/start /result/version:",
    ]);
  });

  it("matches them by words only when one fits best", () => {
    const requests = [{ method: "account/logout" }, { method: "config/value/write", paramsName: "ConfigValueWriteParams" }, { method: "a/b/c" }, { method: "x/read" }];
    const { results, ambiguous } = matchCodexResults(requests, ["LogoutAccountResponse", "ConfigWriteResponse", "XGetResponse", "ReadXResponse", "ConfigValueWriteParams"]);
    expect(Object.fromEntries(results)).toEqual({ "account/logout": "LogoutAccountResponse", "config/value/write": "ConfigWriteResponse" });
    expect(Object.fromEntries(ambiguous)).toEqual({ "x/read": ["XGetResponse", "ReadXResponse"] });
  });

  it("warns about a request whose result it cannot find, on either side, and about ambiguous names", async () => {
    const before: Parts = { requests: { "memory/reset": null, "feedback/upload": null }, defs: { MemoryResetResponse: object({}) } };
    const after: Parts = { requests: { "memory/reset": null, "feedback/upload": null }, defs: {} };
    const r = await diff(before, after);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      [
        "tau-gateway schema diff: warning: request memory/reset: no result definition found in NEW, so its result is not compared",
        "tau-gateway schema diff: warning: request feedback/upload: no result definition found in either bundle, so its result is not compared",
        "",
      ].join("\n"),
    );
    const json = await diff(before, after, "--format", "json");
    expect(lines(json.stdout).at(-1)).toBe('{"breaking":0,"additive":0,"warnings":2}');
    // A new request whose result NEW does not name is said so on its line.
    const added = await diff({ defs: {} }, { requests: { "memory/reset": null }, defs: {} });
    expect(added.stdout).toBe("additive request memory/reset /: new request (NEW names no result definition for it)\n0 breaking, 1 additive\n");
    // Two definitions fitting equally: neither is taken, and the warning names both.
    const twice: Parts = { requests: { "x/read": null }, defs: { XGetResponse: object({}), ReadXResponse: object({}) } };
    expect((await diff(twice, twice)).stderr).toBe(
      [
        "tau-gateway schema diff: warning: OLD: ClientRequest x/read: its result could be any of XGetResponse, ReadXResponse",
        "tau-gateway schema diff: warning: NEW: ClientRequest x/read: its result could be any of XGetResponse, ReadXResponse",
        "tau-gateway schema diff: warning: request x/read: no result definition found in either bundle, so its result is not compared",
        "",
      ].join("\n"),
    );
  });
});

describe("properties beside a oneOf", () => {
  const realtime = (shared: Record<string, unknown>): Parts => ({
    notifications: { "thread/realtime/item/completed": "RealtimeNotification" },
    requests: { "thread/realtime/list": "ListParams" },
    defs: {
      ListParams: object({}),
      ListResponse: object({ data: { type: "array", items: ref("RealtimeItem") } }, ["data"]),
      RealtimeNotification: object({ item: ref("RealtimeItem") }, ["item"]),
      RealtimeItem: {
        type: "object",
        properties: shared,
        required: ["id"],
        oneOf: [object({ type: { type: "string", enum: ["started"] } }, ["type"]), object({ type: { type: "string", enum: ["closed"] }, reason: str }, ["type"])],
      },
    },
  });

  it("are compared, as part of every variant, and said once", async () => {
    const r = await diff(realtime({ id: str, startedAtMs: { type: "integer" } }), realtime({ id: str, observedAtMs: { type: ["integer", "null"] } }));
    expect(lines(r.stdout).filter((l) => !l.startsWith("  "))).toEqual([
      "additive RealtimeItem /observedAtMs: new field",
      "breaking RealtimeItem /startedAtMs: removed",
      "1 breaking, 1 additive",
    ]);
  });

  it("beside the ServerNotification union are part of every notification", async () => {
    const parts = (envelope: Record<string, unknown>): Parts => ({ notifications: { "turn/started": "N", "turn/completed": "N" }, envelope, defs: { N: object({}) } });
    const r = await diff(parts({ emittedAtMs: { type: "integer" } }), parts({}));
    expect(lines(r.stdout)).toEqual([
      "breaking ServerNotification /emittedAtMs: removed",
      "  reaches 2 methods: server notifications turn/completed, turn/started (e.g. server-notification turn/completed /)",
      "1 breaking, 0 additive",
    ]);
  });
});

describe("--methods", () => {
  const surface = (display: Schema): Parts => ({ ...shared(display), requests: { ...shared(display).requests, "thread/archive": "ArchiveParams" }, defs: { ...item(display), ArchiveParams: object({ threadId: str }) } });
  const before = surface(oldDisplay);
  const after: Parts = { ...surface(object({ action: str }, ["action"])), requests: { "turn/start": "TurnStartParams" } };

  it("limits the report to a comma list of methods; a shared change reaching one of them is said for it", async () => {
    const r = await diff(before, after, "--methods", "turn/start,item/completed");
    expect(r.stdout).toBe(
      [
        "breaking Display /blockType: removed",
        "  reaches 2 methods: request turn/start; server notification item/completed (e.g. server-notification item/completed /params/item/moderation/display)",
        "1 breaking, 0 additive",
        "",
      ].join("\n"),
    );
    const one = await diff(before, after, "--methods", "item/started");
    expect(one.stdout).toBe('breaking server-notification item/started /params/item/moderation/display/blockType: removed (type "agentMessage")\n1 breaking, 0 additive\n');
    // Unlisted, the removed thread/archive is not said; listed, it is.
    expect((await diff(before, after, "--methods", "thread/archive")).stdout).toBe("breaking request thread/archive /: request removed\n1 breaking, 0 additive\n");
  });

  it("reads a file of one method per line, skips blank and # lines, and warns about names neither bundle has", async () => {
    const list = await file("# what our server serves\nitem/started\n\nthread/nonsense\n");
    const r = await runCommand(["schema", "diff", "--methods", list, await file(codexBundle(before)), await file(codexBundle(after))]);
    expect(r.stdout).toBe('breaking server-notification item/started /params/item/moderation/display/blockType: removed (type "agentMessage")\n1 breaking, 0 additive\n');
    expect(r.stderr).toBe("tau-gateway schema diff: warning: --methods names thread/nonsense, which neither bundle has\n");
  });

  it("refuses an empty list and a path that is no readable file", async () => {
    const empty = await file("# nothing\n");
    for (const value of [" ", empty, "./missing-methods.txt"]) {
      const r = await diff(before, after, "--methods", value);
      expect(r.code, value).toBe(2);
      expect(r.stderr, value).toMatch(/^tau-gateway schema diff: (--methods needs|the --methods file .* names no method|cannot read the --methods file \.\/missing-methods\.txt: ENOENT)/);
    }
  });
});

describe("--as server", () => {
  const before: Parts = {
    requests: { "thread/list": "ThreadListParams", "thread/archive": "ArchiveParams" },
    serverRequests: { "item/tool/requestUserInput": "InputParams" },
    notifications: { "turn/started": "TurnNotification" },
    defs: {
      ThreadListParams: object({ cursor: str, sort: { type: "string", enum: ["created"] } }),
      ThreadListResponse: object({ data: { type: "array", items: str } }, ["data"]),
      ArchiveParams: object({}),
      ArchiveResponse: object({}),
      InputParams: object({ question: str }, ["question"]),
      InputResponse: object({ answer: str }, ["answer"]),
      TurnNotification: object({ id: str }, ["id"]),
    },
  };
  const after: Parts = {
    requests: { "thread/list": "ThreadListParams", "thread/search": "SearchParams" },
    serverRequests: { "item/tool/requestUserInput": "InputParams" },
    notifications: { "turn/started": "TurnNotification", "thread/search/partial": "TurnNotification" },
    defs: {
      ...before.defs,
      ThreadListParams: object({ cursor: str, sort: { type: "string", enum: ["created", "updated"] }, sourceKinds: { type: "array", items: str } }),
      ThreadListResponse: object({ data: { type: "array", items: str }, nextCursor: str }, ["data"]),
      SearchParams: object({}),
      SearchResponse: object({}),
      InputResponse: object({ answer: str, skipped: { type: "boolean" } }, ["answer"]),
      TurnNotification: object({ id: str, startedAtMs: { type: "integer" } }, ["id", "startedAtMs"]),
    },
  };

  it("says what a server must now honour, may emit, and is no longer sent; must-honour fails the run", async () => {
    const r = await diff(before, after, "--as", "server");
    expect(r.code).toBe(1);
    expect(lines(r.stdout)).toEqual([
      "obsolete request thread/archive /: request removed",
      "must-honour request thread/list /params/sort: may now also be \"updated\"",
      "must-honour request thread/list /params/sourceKinds: new optional field",
      "may-emit request thread/list /result/nextCursor: new optional field",
      "must-honour request thread/search /: new request",
      "must-honour server-request item/tool/requestUserInput /result/skipped: new optional field",
      "may-emit server-notification thread/search/partial /: new server notification",
      "breaking server-notification turn/started /params/startedAtMs: new required field",
      "1 breaking, 4 must-honour, 2 may-emit, 1 obsolete",
    ]);
  });

  it("the same change seen from a client: additive, except the removed request", async () => {
    const r = await diff(before, after);
    expect(r.code).toBe(1);
    expect(lines(r.stdout)).toEqual([
      "breaking request thread/archive /: request removed",
      "additive request thread/list /params/sort: also accepts \"updated\"",
      "additive request thread/list /params/sourceKinds: new optional field",
      "additive request thread/list /result/nextCursor: new field",
      "additive request thread/search /: new request",
      "additive server-request item/tool/requestUserInput /result/skipped: new optional field",
      "additive server-notification thread/search/partial /: new server notification",
      "additive server-notification turn/started /params/startedAtMs: new field, always present",
      "1 breaking, 7 additive",
    ]);
  });

  it("exits 0 when the server need only learn what it may emit", async () => {
    const r = await diff(before, { ...before, notifications: { ...before.notifications, "thread/search/partial": "TurnNotification" } }, "--as", "server", "--format", "json");
    expect(r.code).toBe(0);
    expect(lines(r.stdout).map((l) => JSON.parse(l))).toEqual([
      { severity: "may-emit", kind: "server-notification", method: "thread/search/partial", pointer: "", message: "new server notification" },
      { breaking: 0, "must-honour": 0, "may-emit": 1, obsolete: 0, warnings: 0 },
    ]);
    expect((await diff(before, after, "--as", "bogus")).code).toBe(2);
  });
});
