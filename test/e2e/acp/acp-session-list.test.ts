import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";

/**
 * ACP session/list honours both its options: `cwd` (an absolute path, matched exactly; a relative
 * one is refused naming it) and `cursor` (pages of 50, most recently active first, `nextCursor`
 * absent on the last page; a cursor it did not return is refused naming it).
 */

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway?.stop());

async function acp(): Promise<RawAcpClient> {
  const client = await RawAcpClient.connect(gateway.acpUrl);
  await client.request("initialize", { protocolVersion: 1 });
  return client;
}

/** `count` sessions (made by an Ask client, as any dialect's are listed) in a directory of their own. */
async function sessionsIn(name: string, count: number): Promise<{ cwd: string; ids: string[] }> {
  const cwd = join(gateway.cwd, name);
  mkdirSync(cwd);
  const ask = await gateway.client();
  await ask.request("initialize", { client: { name: "e2e", version: "1" } });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await ask.request("session/create", { workspace: { workspacePath: cwd } })).session.sessionId);
  return { cwd, ids };
}

describe("ACP session/list", () => {
  it("cwd: only the sessions rooted there; a relative path is refused naming cwd", async () => {
    const a = await sessionsIn("a", 2);
    const b = await sessionsIn("b", 1);
    const client = await acp();
    const listed = (await client.request("session/list", { cwd: a.cwd })).result;
    expect(new Set(listed.sessions.map((s: { sessionId: string }) => s.sessionId))).toEqual(new Set(a.ids));
    expect(listed.sessions.every((s: { cwd: string }) => s.cwd === a.cwd)).toBe(true);
    expect(listed.nextCursor).toBeUndefined();
    expect((await client.request("session/list", { cwd: b.cwd })).result.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual(b.ids);
    expect((await client.request("session/list", { cwd: join(gateway.cwd, "none") })).result.sessions).toEqual([]);
    const relative = (await client.request("session/list", { cwd: "a" })).error;
    expect(relative).toMatchObject({ code: -32602 });
    expect(relative.message).toContain("cwd");
    client.socket.close();
  });

  it("cursor: pages of 50, each session once, most recently active first; a cursor it did not return is refused naming cursor", async () => {
    const { cwd, ids } = await sessionsIn("many", 53);
    const client = await acp();
    const first = (await client.request("session/list", { cwd })).result;
    expect(first.sessions).toHaveLength(50);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = (await client.request("session/list", { cwd, cursor: first.nextCursor })).result;
    expect(second.sessions).toHaveLength(3);
    expect(second.nextCursor).toBeUndefined();
    const all = [...first.sessions, ...second.sessions];
    expect(new Set(all.map((s: { sessionId: string }) => s.sessionId))).toEqual(new Set(ids));
    const times = all.map((s: { updatedAt: string }) => Date.parse(s.updatedAt));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    for (const cursor of ["garbage", Buffer.from('{"at":"x"}').toString("base64url")]) {
      const error = (await client.request("session/list", { cursor })).error;
      expect(error, cursor).toMatchObject({ code: -32602 });
      expect(error.message).toContain("cursor");
    }
    client.socket.close();
  });
});
