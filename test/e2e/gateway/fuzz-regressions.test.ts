import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { BridgeStack } from "../../../src/cli/bridge-stack.js";
import { buildGateway } from "../../../src/gateway/app.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startCountingRelay } from "../../support/counting-relay.js";
import { gatewayInFrontOf, startTestGateway } from "../../support/gateway.js";
import { startHostClosedAfterTest, TauTestClient } from "../../support/tau-client.js";

/**
 * Defects a property-based fuzz run found, each pinned with the smallest message that showed it,
 * over real sockets.
 */

const cleanups = cleanupsAfterEach();

/** JSON nested deeper than JSON.stringify can write back (JSON.parse reads any depth). */
const deeplyNested = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

async function tauEndpoints(): Promise<Array<{ name: string; url: string }>> {
  const host = await startHostClosedAfterTest(cleanups);
  const { app } = gatewayInFrontOf(host.url, cleanups);
  const address = await app.listen({ port: 0, host: "127.0.0.1" });
  return [
    { name: "the gateway's /tau", url: `${address.replace("http://", "ws://")}/tau` },
    { name: "the embedded host", url: host.url },
  ];
}

describe("a Tau request with a deeply nested value where the version goes", () => {
  it("is answered with invalid_request carrying its id, and the connection stays usable", async () => {
    for (const { name, url } of await tauEndpoints()) {
      const client = await TauTestClient.connect(url, name);
      cleanups.push(() => client.close());
      const since = client.mark();
      client.sendRaw(`{"version":${deeplyNested(200_000)},"type":"request","id":"deep","method":"session.list","params":{}}`);
      const response = await client.waitFor((m) => m.type === "response" && m.id === "deep", `${name}: the answer to the deep version`, { since });
      // Refused for its shape before it is parsed, still answering the request by its id.
      expect(response, name).toMatchObject({ ok: false, error: { code: "invalid_request", message: expect.stringContaining("nested more than 64 levels deep"), data: { limit: 64 } } });
      expect((await client.call("session.list", {})).sessions, name).toEqual([]);
      client.assertAllValid();
    }
  });
});

describe("an Ask request whose id is an integer beyond 2^53", () => {
  it("is refused with -32600 and a null id, never echoed with an id the registry's RequestId does not allow", async () => {
    const gateway = await cleanups.stopAfterTest(startTestGateway());
    const client = await gateway.client();
    for (const id of ["9007199254740993", "1e21", "-9007199254740993"]) client.socket.send(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`);
    // A safe integer right after: answered normally, and after the three refusals.
    expect(await client.request("ping")).toMatchObject({ status: "ok" });
    const refusals = client.received.filter((m: any) => m.error);
    expect(refusals).toEqual(Array.from({ length: 3 }, () => expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600 }) })));
    expect(client.invalid).toEqual([]);
  });
});

describe("an Ask request with a null id", () => {
  it("is refused with -32600 (a success response with a null id is invalid in the registry), alone and in a batch", async () => {
    const gateway = await cleanups.stopAfterTest(startTestGateway());
    const client = await gateway.client();
    client.socket.send('{"jsonrpc":"2.0","id":null,"method":"ping"}');
    client.socket.send('[{"jsonrpc":"2.0","id":null,"method":"session/list","params":{}}]');
    expect(await client.request("ping")).toMatchObject({ status: "ok" });
    await client.waitFor(() => client.received.filter((m: any) => m.error).length === 2, "both refusals");
    expect(client.received.filter((m: any) => "result" in m && m.id === null)).toEqual([]);
    expect(client.received.filter((m: any) => m.error)).toEqual(Array.from({ length: 2 }, () => expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600 }) })));
    expect(client.invalid).toEqual([]);
  });
});

describe("a Codex app-server message with a broken envelope and no id", () => {
  it("gets no answer at all (nothing with a null id), and the connection carries on", async () => {
    const gateway = await cleanups.stopAfterTest(startTestGateway());
    const client = await gateway.codexClient();
    await client.initialize();
    for (const text of ["{}", '{"__proto__":[]}', '{"method":5}', '{"jsonrpc":"1.0","method":"account/read"}', '{"jsonrpc":"2.0","params":{}}']) client.socket.send(text);
    // Answered after everything before it was read: by then a refusal would have been written.
    expect(await client.request("account/read", {})).toEqual({ account: null, requiresOpenaiAuth: false });
    expect(client.received.filter((m) => m.id === null)).toEqual([]);
    expect(client.invalid).toEqual([]);
  });
});

describe("an ACP session id that is empty or only whitespace", () => {
  it("is a session not found (-32002), and no request for it reaches Tau", async () => {
    const host = await startHostClosedAfterTest(cleanups);
    const relay = await startCountingRelay(host.url);
    cleanups.push(() => relay.close());
    const stack = new BridgeStack();
    cleanups.push(() => stack.close());
    await stack.start({ upstream: relay.url, defaultCwd: tmpdir(), eventRetention: 10_000, interactionTimeoutMs: 300_000 }, [], () => undefined);
    const app = buildGateway({ tauUpstream: { url: host.url }, upstream: stack.upstream!, dialects: stack.gatewayDialects({ jsonrpcMember: "include" }).filter((dialect) => dialect.name === "acp") });
    cleanups.push(() => app.close());
    const address = await app.listen({ host: "127.0.0.1", port: 0 });
    const client = await RawAcpClient.connect(`${address.replace("http://", "ws://")}/acp`);
    cleanups.push(() => client.socket.terminate());
    await client.initialize();
    for (const sessionId of ["", " ", "\t\n"]) {
      const loaded = await client.request("session/load", { sessionId, cwd: tmpdir(), mcpServers: [] });
      expect(loaded.error, JSON.stringify(sessionId)).toMatchObject({ code: -32002 });
      const prompted = await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] });
      expect(prompted.error, JSON.stringify(sessionId)).toMatchObject({ code: -32002 });
    }
    expect(relay.count("session.observe")).toBe(0);
    expect(relay.count("session.snapshot")).toBe(0);
  });
});
