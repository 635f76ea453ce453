import { expect, it } from "vitest";
import { rpcError, type AskTestClient } from "../../support/ask-client.js";
import { openSession } from "../../support/ask-events.js";
import { describeOverAskTransports } from "../../support/ask-transports.js";

/**
 * session/list pages with `cursor` / `nextCursor`: newest first, every session exactly once across
 * the pages, and sessions created while a client pages through do not shift the pages it has not
 * read yet (they sort before the first page). Over stdio, WebSocket `/rpc` and the Unix socket.
 */

type Summary = { sessionId: string; createdAt: string };

async function page(client: AskTestClient, params: Record<string, unknown>): Promise<{ sessions: Summary[]; nextCursor: string | null }> {
  return client.request("session/list", params);
}

describeOverAskTransports("session/list pagination", {}, (transport) => {
  it("pages through every session once, newest first, unshaken by sessions created meanwhile", async () => {
    const client = await transport().client();
    // The gateway is shared by the file's tests: sessions of earlier ones are listed too.
    const earlier = (await page(client, { limit: 1000 })).sessions.map((s) => s.sessionId);
    const created: string[] = [];
    for (let i = 0; i < 7; i++) created.push(await openSession(client));

    const everything = await page(client, { limit: 1000 });
    expect(everything.nextCursor).toBeNull();
    expect(new Set(everything.sessions.map((s) => s.sessionId))).toEqual(new Set([...created, ...earlier]));
    const times = everything.sessions.map((s) => s.createdAt);
    expect(times).toEqual([...times].sort().reverse());

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const next = await page(client, { limit: 3, ...(cursor ? { cursor } : {}) });
      seen.push(...next.sessions.map((s) => s.sessionId));
      cursor = next.nextCursor ?? undefined;
      pages += 1;
      // New sessions arrive between pages; they are newer than anything paged so far.
      if (pages === 1) await openSession(client);
    } while (cursor);
    expect(pages).toBe(Math.ceil(everything.sessions.length / 3));
    expect(seen).toEqual(everything.sessions.map((s) => s.sessionId));

    // The default page is 20 and carries no cursor when everything fits.
    expect((await page(client, {})).nextCursor).toEqual(everything.sessions.length + 1 > 20 ? expect.any(String) : null);
    expect(client.invalid).toEqual([]);
  });

  it("refuses a cursor it did not make", async () => {
    const client = await transport().client();
    for (const cursor of ["not-a-cursor", Buffer.from("[1]").toString("base64url"), Buffer.from('{"a":1}').toString("base64url")]) {
      const error = await rpcError(client.request("session/list", { cursor }));
      expect([error.code, error.message], cursor).toEqual([-32602, "-32602: invalid params: cursor: not a nextCursor from session/list"]);
    }
  });
});
