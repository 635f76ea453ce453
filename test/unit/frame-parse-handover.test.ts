import { afterEach, describe, expect, it, vi } from "vitest";
import { InspectorHub } from "../../src/gateway/inspector/inspector-hub.js";
import { parseMessage } from "../../src/transports/jsonrpc-envelope.js";

/**
 * A client's message is parsed once with the inspector on: its trace parses it as it arrives and
 * hands the value over to the connection the message goes to next, in the same turn; nothing is
 * held past that turn.
 */

const request = (id: number) => JSON.stringify({ id, method: "thread/start", params: { dynamicTools: [{ type: "function", name: "t", description: "d", inputSchema: { type: "object" } }] } });

afterEach(() => vi.restoreAllMocks());

describe("a frame's parse handed from the inspector to the connection", () => {
  it("gives the connection the inspector's parse of the same text, without parsing it again", () => {
    const hub = new InspectorHub();
    const tap = hub.connection("codex", "websocket /");
    const text = request(1);
    const parse = vi.spyOn(JSON, "parse");
    tap.client(text);
    expect(parse).toHaveBeenCalledTimes(1);
    expect(hub.trace("codex-1")!.frames()[0]).toMatchObject({ kind: "request", method: "thread/start", message: text });
    // The connection reads a copy of the text (as a socket's listener does): equal, not the same string object.
    expect(parseMessage(`${text} `.trimEnd())).toEqual({ value: JSON.parse(text) });
    expect(parse).toHaveBeenCalledTimes(2); // the expectation's own parse, not parseMessage's
  });

  it("is taken once, and only for the same text", () => {
    const hub = new InspectorHub();
    const tap = hub.connection("codex", "websocket /");
    tap.client(request(1));
    const parse = vi.spyOn(JSON, "parse");
    expect(parseMessage(request(2))).toEqual({ value: { id: 2, method: "thread/start", params: expect.any(Object) } });
    expect(parse).toHaveBeenCalledTimes(1);
    tap.client(request(3));
    parseMessage(request(3));
    parseMessage(request(3));
    expect(parse).toHaveBeenCalledTimes(3);
  });

  it("holds nothing past the turn: a later parse of the same text parses it", async () => {
    const hub = new InspectorHub();
    hub.connection("codex", "websocket /").client(request(1));
    await Promise.resolve();
    const parse = vi.spyOn(JSON, "parse");
    parseMessage(request(1));
    expect(parse).toHaveBeenCalledTimes(1);
  });
});
