import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rpcError, type CodexTestClient } from "../../support/codex-client.js";
import { codexSuite } from "../../support/codex-suite.js";

/**
 * thread/list honours every filter and option of the official params, as the real app-server
 * 0.171.0 does (each was tried against it on a loopback mock model): sub-agent sources and
 * archived threads (the 0.171.0 terminal UI asks for both at start-up and must get none), cwd,
 * searchTerm, modelProviders, included/excluded ids, sections and projects, sort key and
 * direction, cursors both ways, limit. Each test lists the threads of a directory of its own, so
 * the file's threads do not meet. Every message is checked against the official schema.
 */

const suite = codexSuite([]);
const ids = (page: { data: Array<{ id: string }> }) => page.data.map((t) => t.id);
let folders = 0;

/** `texts.length` threads in a directory of their own, one turn each (that text), in that order; their ids and the directory. */
async function threadsIn(c: CodexTestClient, texts: string[]): Promise<{ cwd: string; threads: string[] }> {
  const cwd = join(suite.gateway.cwd, `list-${++folders}`);
  mkdirSync(cwd);
  const threads: string[] = [];
  for (const text of texts) {
    const { thread } = await c.request("thread/start", { cwd });
    await c.turn(thread.id, text);
    threads.push(thread.id);
  }
  return { cwd, threads };
}

/** The threads in the order of their creation, newest first, as the host's clock has it (Ask's session/list is by creation time to the millisecond). */
async function newestCreatedFirst(threads: string[]): Promise<string[]> {
  const ask = await suite.gateway.client();
  const { sessions } = await ask.request("session/list", { limit: 1000 });
  return (sessions as Array<{ sessionId: string }>).map((s) => s.sessionId).filter((id) => threads.includes(id));
}

async function client(): Promise<CodexTestClient> {
  const c = await suite.client();
  await c.initialize();
  return c;
}

describe("thread/list sources", () => {
  it("lists a gateway thread (source vscode, as the app-server's own) by default and for the terminal UI's resume picker, never as appServer's or a sub-agent's", async () => {
    const c = await client();
    const { cwd, threads } = await threadsIn(c, ["hello"]);
    const listed = await c.request("thread/list", { cwd });
    expect(ids(listed)).toEqual(threads);
    expect(listed.data[0].source).toBe("vscode");
    expect(ids(await c.request("thread/list", { cwd, sourceKinds: [] }))).toEqual(threads);
    // What `codex resume` (and `--last`) asks for, with and without --include-non-interactive.
    expect(ids(await c.request("thread/list", { cwd, sourceKinds: ["cli", "vscode"], archived: false }))).toEqual(threads);
    expect(ids(await c.request("thread/list", { cwd, sourceKinds: ["cli", "vscode", "exec", "appServer"] }))).toEqual(threads);
    for (const kind of ["cli", "exec", "appServer", "unknown", "subAgent", "subAgentReview", "subAgentCompact", "subAgentThreadSpawn", "subAgentOther"]) {
      expect(ids(await c.request("thread/list", { cwd, sourceKinds: [kind] })), kind).toEqual([]);
    }
  });

  it("answers the 0.171.0 terminal UI's start-up question about sub-agent threads with none", async () => {
    const c = await client();
    const { threads } = await threadsIn(c, ["hello"]);
    for (const archived of [false, true]) {
      const asked = { cursor: null, limit: 100, sortKey: null, sortDirection: "desc", modelProviders: [], sourceKinds: ["subAgentThreadSpawn"], archived, useStateDbOnly: true, ancestorThreadId: threads[0] };
      expect(await c.request("thread/list", asked)).toEqual({ data: [], nextCursor: null, backwardsCursor: null });
      expect((await c.request("thread/list", { ...asked, ancestorThreadId: null })).data).toEqual([]);
    }
  });

  it("refuses a source kind Codex does not have, naming the field", async () => {
    const c = await client();
    expect(await rpcError(c.request("thread/list", { sourceKinds: ["bogus"] }))).toMatchObject({ code: -32602, message: expect.stringContaining("sourceKinds") });
  });
});

describe("thread/list filters", () => {
  it("archived: true finds none (the gateway archives no thread); false and null find them all", async () => {
    const c = await client();
    const { cwd, threads } = await threadsIn(c, ["one"]);
    expect(ids(await c.request("thread/list", { cwd, archived: true }))).toEqual([]);
    expect(ids(await c.request("thread/list", { cwd, archived: false }))).toEqual(threads);
    expect(ids(await c.request("thread/list", { cwd, archived: null }))).toEqual(threads);
  });

  it("cwd: one path or several, matched exactly", async () => {
    const c = await client();
    const a = await threadsIn(c, ["in a"]);
    const b = await threadsIn(c, ["in b"]);
    expect(ids(await c.request("thread/list", { cwd: a.cwd }))).toEqual(a.threads);
    expect(new Set(ids(await c.request("thread/list", { cwd: [a.cwd, b.cwd] })))).toEqual(new Set([...a.threads, ...b.threads]));
    expect(ids(await c.request("thread/list", { cwd: `${a.cwd}/` }))).toEqual([]);
    expect(ids(await c.request("thread/list", { cwd: [] }))).toEqual([]);
  });

  it("searchTerm: a case-sensitive substring of the thread's title", async () => {
    const c = await client();
    const { cwd, threads } = await threadsIn(c, ["Refactor the parser", "write docs"]);
    expect(ids(await c.request("thread/list", { cwd, searchTerm: "the pars" }))).toEqual([threads[0]]);
    expect(ids(await c.request("thread/list", { cwd, searchTerm: "refactor" }))).toEqual([]);
    expect(ids(await c.request("thread/list", { cwd, searchTerm: "docs" }))).toEqual([threads[1]]);
  });

  it("modelProviders: the threads recorded under one of them (tau); empty means all", async () => {
    const c = await client();
    const { cwd, threads } = await threadsIn(c, ["one"]);
    expect(ids(await c.request("thread/list", { cwd, modelProviders: ["tau"] }))).toEqual(threads);
    expect(ids(await c.request("thread/list", { cwd, modelProviders: ["openai", "tau"] }))).toEqual(threads);
    expect(ids(await c.request("thread/list", { cwd, modelProviders: ["openai"] }))).toEqual([]);
    expect(ids(await c.request("thread/list", { cwd, modelProviders: [] }))).toEqual(threads);
  });

  it("includedThreadIds and excludedThreadIds: at most 100 each, exclusions win, an empty inclusion matches nothing", async () => {
    const c = await client();
    const { cwd, threads } = await threadsIn(c, ["one", "two", "three"]);
    const [t1, t2, t3] = threads as [string, string, string];
    expect(new Set(ids(await c.request("thread/list", { includedThreadIds: [t1, t3] })))).toEqual(new Set([t1, t3]));
    expect(ids(await c.request("thread/list", { includedThreadIds: [t1, t3], excludedThreadIds: [t3] }))).toEqual([t1]);
    expect(ids(await c.request("thread/list", { includedThreadIds: [] }))).toEqual([]);
    expect(new Set(ids(await c.request("thread/list", { cwd, excludedThreadIds: [t2] })))).toEqual(new Set([t1, t3]));
    expect(new Set(ids(await c.request("thread/list", { cwd, excludedThreadIds: [] })))).toEqual(new Set(threads));
    for (const field of ["includedThreadIds", "excludedThreadIds"]) {
      expect(await rpcError(c.request("thread/list", { [field]: Array.from({ length: 101 }, () => t1) }))).toMatchObject({
        code: -32602,
        message: `-32602: invalid params: ${field}: ${field} accepts at most 100 entries`,
      });
      expect(await rpcError(c.request("thread/list", { [field]: [" "] }))).toMatchObject({ code: -32602, message: expect.stringContaining(field) });
    }
  });

  it("sections and projects: a section finds none, null means unsectioned (all); a project is not found, null is unassigned (all)", async () => {
    const c = await client();
    const { cwd, threads } = await threadsIn(c, ["one"]);
    expect(ids(await c.request("thread/list", { cwd, sectionId: "01984de2-8f74-7c91-a3b2-5c5e937cf318" }))).toEqual([]);
    expect(ids(await c.request("thread/list", { cwd, sectionId: "s", sortKey: "section_position" }))).toEqual([]);
    expect(ids(await c.request("thread/list", { cwd, sectionId: null }))).toEqual(threads);
    expect(await rpcError(c.request("thread/list", { cwd, sortKey: "section_position" }))).toMatchObject({ code: -32600, message: "-32600: section-position sorting requires a section filter" });
    expect(ids(await c.request("thread/list", { cwd, projectId: null }))).toEqual(threads);
    expect(await rpcError(c.request("thread/list", { cwd, projectId: "p" }))).toMatchObject({ code: -32602, message: "-32602: invalid params: projectId: project not found: p" });
  });

  it("originators: refused unless empty, since only hosted backends filter on it", async () => {
    const c = await client();
    const { cwd, threads } = await threadsIn(c, ["one"]);
    expect(await rpcError(c.request("thread/list", { originators: ["codex-tui"] }))).toMatchObject({ code: -32602, message: expect.stringContaining("originators") });
    expect(ids(await c.request("thread/list", { cwd, originators: [] }))).toEqual(threads);
    expect(ids(await c.request("thread/list", { cwd, originators: null }))).toEqual(threads);
  });

  it("currentAccountOnly and useStateDbOnly: the tenant's threads either way (no account, no state database)", async () => {
    const c = await client();
    const { cwd, threads } = await threadsIn(c, ["one"]);
    for (const value of [true, false]) {
      expect(ids(await c.request("thread/list", { cwd, currentAccountOnly: value }))).toEqual(threads);
      expect(ids(await c.request("thread/list", { cwd, useStateDbOnly: value }))).toEqual(threads);
    }
  });

  it("parentThreadId, ancestorThreadId, attachedToThreadId: none (no sub-agents, no attachments); combined, refused as Codex does", async () => {
    const c = await client();
    const { cwd, threads } = await threadsIn(c, ["one"]);
    const [t] = threads as [string];
    for (const field of ["parentThreadId", "ancestorThreadId", "attachedToThreadId"]) {
      expect(ids(await c.request("thread/list", { cwd, [field]: t })), field).toEqual([]);
      expect(ids(await c.request("thread/list", { cwd, [field]: null })), field).toEqual(threads);
    }
    expect(await rpcError(c.request("thread/list", { parentThreadId: t, ancestorThreadId: t }))).toMatchObject({ code: -32600, message: "-32600: parentThreadId and ancestorThreadId are mutually exclusive" });
    expect(await rpcError(c.request("thread/list", { attachedToThreadId: t, parentThreadId: t }))).toMatchObject({
      code: -32600,
      message: "-32600: attachedToThreadId cannot be combined with parentThreadId or ancestorThreadId",
    });
    expect(ids(await c.request("thread/list", { cwd, includeAttachedThreads: true, searchTerm: "one" }))).toEqual(threads);
  });
});

describe("thread/list order and pages", () => {
  it("is newest created first by default, oldest first with sortDirection asc", async () => {
    const c = await client();
    const { cwd, threads } = await threadsIn(c, ["one", "two", "three"]);
    const newest = await newestCreatedFirst(threads);
    expect(ids(await c.request("thread/list", { cwd }))).toEqual(newest);
    expect(ids(await c.request("thread/list", { cwd, sortKey: "created_at", sortDirection: "desc" }))).toEqual(newest);
    expect(ids(await c.request("thread/list", { cwd, sortDirection: "asc" }))).toEqual([...newest].reverse());
  });

  it("sorts by the last message with updated_at and recency_at", async () => {
    const c = await client();
    const { cwd, threads } = await threadsIn(c, ["one", "two"]);
    const [older] = await newestCreatedFirst(threads).then((order) => order.slice(1));
    await c.turn(older!, "again");
    for (const sortKey of ["updated_at", "recency_at"]) {
      expect(ids(await c.request("thread/list", { cwd, sortKey }))[0], sortKey).toBe(older);
      expect(ids(await c.request("thread/list", { cwd, sortKey, sortDirection: "asc" })).at(-1), sortKey).toBe(older);
    }
  });

  it("pages with limit and nextCursor, turns back with backwardsCursor, reads limit 0 as 1", async () => {
    const c = await client();
    const { cwd, threads } = await threadsIn(c, ["one", "two", "three"]);
    const newest = await newestCreatedFirst(threads);
    const first = await c.request("thread/list", { cwd, limit: 1 });
    expect(ids(first)).toEqual([newest[0]]);
    const second = await c.request("thread/list", { cwd, limit: 1, cursor: first.nextCursor });
    expect(ids(second)).toEqual([newest[1]]);
    const last = await c.request("thread/list", { cwd, limit: 5, cursor: second.nextCursor });
    expect(ids(last)).toEqual([newest[2]]);
    expect(last.nextCursor).toBeNull();
    // From the middle page the other way: that thread again, then the newer one.
    expect(ids(await c.request("thread/list", { cwd, cursor: second.backwardsCursor, sortDirection: "asc" }))).toEqual([newest[1], newest[0]]);
    expect(ids(await c.request("thread/list", { cwd, limit: 0 }))).toEqual([newest[0]]);

    // A thread created meanwhile sorts before the first page: the pages after it do not shift.
    const { thread } = await c.request("thread/start", { cwd });
    expect(ids(await c.request("thread/list", { cwd, limit: 1, cursor: first.nextCursor }))).toEqual([newest[1]]);
    expect(ids(await c.request("thread/list", { cwd, limit: 1 }))).toEqual([thread.id]);
    const empty = await c.request("thread/list", { cwd, sectionId: "none" });
    expect(empty).toEqual({ data: [], nextCursor: null, backwardsCursor: null });
  });

  it("refuses a cursor it did not return, or one made for another sortKey, naming cursor", async () => {
    const c = await client();
    const { cwd } = await threadsIn(c, ["one", "two"]);
    const page = await c.request("thread/list", { cwd, limit: 1 });
    for (const [cursor, sortKey] of [["garbage", null], [Buffer.from('{"at":1}').toString("base64url"), null], [page.nextCursor, "updated_at"]]) {
      expect(await rpcError(c.request("thread/list", { cwd, cursor, sortKey })), String(cursor)).toMatchObject({
        code: -32602,
        message: "-32602: invalid params: cursor: not a cursor thread/list returned for this sortKey",
      });
    }
    expect((await rpcError(c.request("thread/list", { limit: -1 }))).code).toBe(-32602);
  });
});
