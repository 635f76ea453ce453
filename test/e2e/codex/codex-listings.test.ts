import { describe, expect, it } from "vitest";
import { rpcError, type CodexTestClient } from "../../support/codex-client.js";
import { codexSuite } from "../../support/codex-suite.js";

/**
 * What the Codex terminal UI 0.169.0 asks about besides its turns, over a real WebSocket against
 * the embedded Tau host: a thread's turns page by page (thread/turns/list), and the hooks, plugins
 * and Bedrock GovCloud check a Tau-backed gateway has none of. Every message is checked against
 * the official Codex schema.
 */

const suite = codexSuite([]);
const started = (c: CodexTestClient) => suite.startedThread(c);
const ids = (page: { data: Array<{ id: string }> }) => page.data.map((t) => t.id);

describe("thread/turns/list", () => {
  it("pages a thread's turns newest first, or oldest first with sortDirection asc, as thread/read has them", async () => {
    const c = await suite.client();
    const threadId = await started(c);
    for (const text of ["one", "/bash echo two\ntwo", "three"]) await c.turn(threadId, text);
    const { turns } = (await c.request("thread/read", { threadId, includeTurns: true })).thread;
    const [t1, t2, t3] = turns.map((t: { id: string }) => t.id);
    expect(turns).toHaveLength(3);

    // As the terminal UI asks (for the thread's first prompt): the newest turn, in Codex's default summary view.
    const newest = await c.request("thread/turns/list", { threadId, cursor: null, limit: 1, sortDirection: null, itemsView: null });
    expect(newest.data).toEqual([{ ...turns[2], itemsView: "summary" }]);
    const second = await c.request("thread/turns/list", { threadId, cursor: newest.nextCursor, limit: 1 });
    expect(ids(second)).toEqual([t2]);
    // A summary is the turn's first user message and its last agent message, as Codex's; full is every item.
    const types = (page: { data: Array<{ items: Array<{ type: string }> }> }) => page.data[0]!.items.map((i) => i.type);
    expect(types(second)).toEqual(["userMessage", "agentMessage"]);
    expect(second.data[0].itemsView).toBe("summary");
    expect(second.data[0].items).toEqual([turns[1].items[0], turns[1].items.at(-1)]);
    const full = await c.request("thread/turns/list", { threadId, cursor: newest.nextCursor, limit: 1, itemsView: "full" });
    expect(full.data).toEqual([{ ...turns[1], itemsView: "full" }]);
    expect(types(await c.request("thread/turns/list", { threadId, cursor: newest.nextCursor, limit: 1, itemsView: "summary" }))).toEqual(["userMessage", "agentMessage"]);
    const last = await c.request("thread/turns/list", { threadId, cursor: second.nextCursor, limit: 1 });
    expect(ids(last)).toEqual([t1]);
    expect(last.nextCursor).toBeNull();

    // The other way from the middle page's backwardsCursor: that turn again, then the newer ones.
    const back = await c.request("thread/turns/list", { threadId, cursor: second.backwardsCursor, sortDirection: "asc" });
    expect(ids(back)).toEqual([t2, t3]);
    expect(back.nextCursor).toBeNull();

    const ascending = await c.request("thread/turns/list", { threadId, limit: 2, sortDirection: "asc" });
    expect(ids(ascending)).toEqual([t1, t2]);
    expect(ids(await c.request("thread/turns/list", { threadId, cursor: ascending.nextCursor, sortDirection: "asc" }))).toEqual([t3]);
    const all = await c.request("thread/turns/list", { threadId });
    expect(ids(all)).toEqual([t3, t2, t1]);
    expect(all.nextCursor).toBeNull();

    const bare = await c.request("thread/turns/list", { threadId, limit: 3, itemsView: "notLoaded" });
    expect(bare.data.map((t: { items: unknown[]; itemsView: string }) => [t.items, t.itemsView])).toEqual([
      [[], "notLoaded"],
      [[], "notLoaded"],
      [[], "notLoaded"],
    ]);
  });

  it("gives a thread with no turns an empty page, and a new turn shows up in it", async () => {
    const c = await suite.client();
    const threadId = await started(c);
    expect(await c.request("thread/turns/list", { threadId, limit: 1 })).toEqual({ data: [], nextCursor: null, backwardsCursor: null });
    const { turnId } = await c.turn(threadId, "hello");
    expect(ids(await c.request("thread/turns/list", { threadId, limit: 1 }))).toEqual([turnId]);
  });

  it("refuses a cursor it did not return for the thread (-32602 naming cursor) and an unknown thread as thread/read does", async () => {
    const c = await suite.client();
    const threadId = await started(c);
    await c.turn(threadId, "one");
    await c.turn(threadId, "two");
    const other = (await c.request("thread/start", { cwd: suite.gateway.cwd })).thread.id;
    await c.turn(other, "elsewhere");
    const otherCursor = (await c.request("thread/turns/list", { threadId: other, limit: 1 })).backwardsCursor;

    for (const cursor of ["nonsense", Buffer.from('{"after":1}').toString("base64url"), otherCursor]) {
      const error = await rpcError(c.request("thread/turns/list", { threadId, cursor }));
      expect(error, String(cursor)).toMatchObject({ code: -32602, message: "-32602: invalid params: cursor: not a cursor thread/turns/list returned for this thread" });
    }
    expect((await rpcError(c.request("thread/turns/list", { threadId, limit: -1 }))).code).toBe(-32602);

    const unknown = "00000000-0000-4000-8000-000000000000";
    const read = await rpcError(c.request("thread/read", { threadId: unknown }));
    expect(await rpcError(c.request("thread/turns/list", { threadId: unknown, limit: 1 }))).toEqual(read);
    expect(read.message).toBe(`-32600: thread not found: ${unknown}`);
  });
});

describe("hooks, plugins, Bedrock", () => {
  it("lists no hooks per working directory: the ones asked about, the thread's, or the default one", async () => {
    const c = await suite.client();
    const threadId = await started(c);
    const none = { hooks: [], errors: [], warnings: [] };
    expect(await c.request("hooks/list", { cwds: ["/a", "/b"], threadId: null })).toEqual({ data: [{ cwd: "/a", ...none }, { cwd: "/b", ...none }] });
    expect(await c.request("hooks/list", { threadId })).toEqual({ data: [{ cwd: suite.gateway.cwd, ...none }] });
    expect(await c.request("hooks/list", { cwds: [] })).toEqual({ data: [{ cwd: suite.gateway.cwd, ...none }] });
    expect((await rpcError(c.request("hooks/list", { threadId: "00000000-0000-4000-8000-000000000000" }))).code).toBe(-32600);
  });

  it("has no plugins, and no Bedrock GovCloud region to warn about (experimental, as in Codex)", async () => {
    const c = await suite.client();
    await c.initialize();
    expect(await c.request("plugin/installed", { cwds: null })).toEqual({ marketplaces: [], marketplaceLoadErrors: [] });
    expect(await c.request("account/bedrock/checkGovCloudRequirements", {})).toEqual({ isGovCloud: false, shouldWarn: false });

    const plain = await suite.client();
    await plain.initialize(null);
    expect(await plain.request("plugin/installed", {})).toEqual({ marketplaces: [], marketplaceLoadErrors: [] });
    expect(await plain.request("hooks/list", {})).toMatchObject({ data: [{ cwd: suite.gateway.cwd }] });
    expect(await rpcError(plain.request("account/bedrock/checkGovCloudRequirements", {}))).toMatchObject({
      code: -32600,
      message: "-32600: account/bedrock/checkGovCloudRequirements requires experimentalApi capability",
    });
  });
});
