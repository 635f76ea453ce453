import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { TAU_V18_METHODS } from "../../support/messages.js";
import { HostHarness, TauTestClient } from "../../support/tau-client.js";

/**
 * The embedded Tau host's transport and envelope handling (spec §1.2–§1.5, §2.1): `ready` first,
 * every row of the request-parser error table, and the close codes.
 */

let h: HostHarness;

afterEach(async () => {
  await h.dispose();
});

describe("ready", () => {
  it("is the first message and lists the 30 methods in order", async () => {
    h = new HostHarness();
    await h.start();
    const client = await h.connect();
    expect(client.ready).toEqual({ version: 18, type: "ready", methods: TAU_V18_METHODS });
  });
});

describe("request parser errors", () => {
  const rows: Array<[string, string, string, string | null, RegExp]> = [
    ["blank message", " \t\r\n", "invalid_request", null, /request line cannot be empty/],
    ["bad JSON", "{nope", "parse_error", null, /failed to parse JSON request line/],
    ["array", "[1,2]", "invalid_request", null, /request must be a JSON object/],
    ["numeric id", JSON.stringify({ version: 18, type: "request", id: 7, method: "session.list", params: {} }), "invalid_request", null, /request id must be a non-empty string/],
    ["whitespace id", JSON.stringify({ version: 18, type: "request", id: "  ", method: "session.list", params: {} }), "invalid_request", null, /request id/],
    ["wrong version", JSON.stringify({ version: 17, type: "request", id: "v", method: "session.list", params: {} }), "invalid_request", "v", /unsupported session protocol version: 17/],
    ["wrong type", JSON.stringify({ version: 18, type: "call", id: "t", method: "session.list", params: {} }), "invalid_request", "t", /request.type must be "request"/],
    ["method not a string", JSON.stringify({ version: 18, type: "request", id: "m", method: 5, params: {} }), "invalid_request", "m", /request.method must be a string/],
    ["params missing", JSON.stringify({ version: 18, type: "request", id: "p", method: "session.list" }), "invalid_request", "p", /request.params is required/],
    ["unknown method", JSON.stringify({ version: 18, type: "request", id: "u", method: "session.teleport", params: {} }), "method_not_found", "u", /unsupported method: session.teleport/],
    ["invalid params", JSON.stringify({ version: 18, type: "request", id: "i", method: "session.exec", params: { sessionId: "s", execId: "", command: "ls" } }), "invalid_params", "i", /execId/],
  ];

  it.each(rows)("%s", async (_name, text, code, id, message) => {
    h = new HostHarness();
    await h.start();
    const client = await h.connect();
    const since = client.mark();
    client.sendRaw(text);
    const response = await client.waitFor((m) => m.type === "response", "error response", { since });
    expect(response).toMatchObject({ version: 18, type: "response", id, ok: false, error: { code } });
    expect(response.error.message).toMatch(message);
    // The connection stays usable.
    expect((await client.call("session.list", {})).sessions).toEqual([]);
  });
});

describe("lenient parts of the envelope", () => {
  it("strips unknown top-level fields and unknown params fields", async () => {
    h = new HostHarness();
    await h.start();
    const client = await h.connect();
    const since = client.mark();
    client.sendRaw(JSON.stringify({ version: 18, type: "request", id: "extra", method: "session.list", params: { extra: 1 }, trace: "t" }));
    const response = await client.waitFor((m) => m.type === "response" && m.id === "extra", "response to a request with extra fields", { since });
    expect(response).toMatchObject({ ok: true, result: { sessions: [] } });
  });
});

describe("close codes", () => {
  it("closes a binary frame with 1003", async () => {
    h = new HostHarness();
    await h.start();
    const client = await h.connect();
    client.socket.send(Buffer.from("{}"), { binary: true });
    expect((await client.closed()).code).toBe(1003);
  });

  it("closes a connection without the right tau_token with 1008 and accepts the right one", async () => {
    h = new HostHarness();
    await h.start({ authToken: "s3cret" });
    for (const url of [h.host.url, `${h.host.url}/?tau_token=wrong`]) {
      const closed = await new Promise<number>((resolve) => {
        const socket = new WebSocket(url);
        socket.on("error", () => undefined);
        socket.on("close", (code) => resolve(code));
      });
      expect(closed, url).toBe(1008);
    }
    const client = await TauTestClient.connect(`${h.host.url}/any/path?tau_token=s3cret`);
    h.clients.push(client);
    expect(client.ready.version).toBe(18);
  });

  it("terminates connections when the host closes", async () => {
    h = new HostHarness();
    await h.start();
    const client = await h.connect();
    await h.closeHost();
    await client.closed();
    expect(client.closeInfo).toBeDefined();
  });
});
