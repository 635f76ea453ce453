import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, MAX_JSON_VALUES } from "../../../src/shared/json-bounds.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";

/**
 * An HTTP body past the shape bounds is refused while it arrives, at the chunk that passes them,
 * not once the whole body has been read: each request below declares a 16 MiB body but sends only
 * its first 256 KiB and then waits. The answer can only come if the gateway refused what it had
 * so far (without the streaming check it would wait for the other 15.75 MiB, which never come).
 * Each route answers in its own words: Ask's `POST /rpc` and MCP's `POST /mcp` with the Invalid
 * Request error of any transport (with the request's id, which came before the bound), a route
 * with the gateway's plain JSON parser with a 400.
 */

const cleanups = cleanupsAfterEach();
let gw: TestGateway;
let base: URL;
beforeAll(async () => {
  gw = await startTestGateway();
  base = new URL(gw.rpcUrl.replace(/^ws:/, "http:"));
});
afterAll(() => gw?.stop());

const DECLARED = 16 * 1024 * 1024;
const SENT = 256 * 1024;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** HTTP/1.1 on a plain socket, so a test writes exactly the bytes it means to: a body's start, later its rest. */
class RawHttp {
  private readonly socket: Socket;
  private buffered = Buffer.alloc(0);
  private wake: () => void = () => undefined;
  private closed = false;

  constructor() {
    this.socket = connect(Number(base.port), base.hostname);
    this.socket.on("data", (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.wake();
    });
    this.socket.on("close", () => {
      this.closed = true;
      this.wake();
    });
  }

  /** Writes a request's head, declaring a `declared`-byte JSON body, and `body` (all of it or its start). */
  request(method: string, path: string, declared: number, body: string): void {
    this.socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${base.host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${declared}\r\n\r\n`);
    this.write(body);
  }

  write(text: string): void {
    this.socket.write(text);
  }

  /** The next whole response (with a Content-Length). */
  async answer(): Promise<Answer> {
    for (;;) {
      const headEnd = this.buffered.indexOf("\r\n\r\n");
      if (headEnd >= 0) {
        const [statusLine, ...lines] = this.buffered.subarray(0, headEnd).toString("latin1").split("\r\n");
        const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
        const length = Number(headers["content-length"]);
        if (this.buffered.length >= headEnd + 4 + length) {
          const body = this.buffered.subarray(headEnd + 4, headEnd + 4 + length).toString("utf8");
          this.buffered = this.buffered.subarray(headEnd + 4 + length);
          return { status: Number(statusLine!.split(" ")[1]), headers, body: JSON.parse(body) as Record<string, unknown> };
        }
      }
      if (this.closed) throw new Error(`the connection closed; read: ${this.buffered.toString("latin1").slice(0, 300)}`);
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/**
 * Sends the head of a request declaring a `declared`-byte body and `start` (SENT bytes) of it,
 * and resolves with the answer, never writing more: the gateway answered having read at most
 * SENT bytes. The connection is left open for what the test writes next.
 */
async function answerToTheStart(method: string, path: string, start: string, declared = DECLARED): Promise<Answer & { connection: RawHttp }> {
  expect(Buffer.byteLength(start)).toBe(SENT);
  const connection = new RawHttp();
  cleanups.push(() => connection.close());
  connection.request(method, path, declared, start);
  return { ...(await connection.answer()), connection };
}

/** A request whose params are arrays nested past the depth bound, `SENT` bytes long in all. */
function deepRequest(id: string, method: string): string {
  const head = JSON.stringify({ jsonrpc: "2.0", id, method }).slice(0, -1) + ',"params":';
  return head + "[".repeat(SENT - head.length);
}

/** A body of empty objects past the values bound (and under the depth bound). */
const wideBody = () => `[${"{},".repeat(Math.floor((SENT - 1) / 3))}`.padEnd(SENT, " ");

describe("a JSON body past the shape bounds", () => {
  it("is refused by POST /rpc before the rest of it arrives, answering the request's id", async () => {
    const answer = await answerToTheStart("POST", "/rpc", deepRequest("deep-1", "session/list"));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ jsonrpc: "2.0", id: "deep-1", error: { code: -32600, message: `Invalid Request: a message nested more than ${MAX_JSON_DEPTH} levels deep (the gateway's limit) was refused`, data: { limit: MAX_JSON_DEPTH } } });
    // The rest is read and dropped, not taken for a request: once it is sent, the connection serves the next one.
    expect(answer.headers.connection).not.toBe("close");
    answer.connection.write("]".repeat(DECLARED - SENT));
    const ping = JSON.stringify({ jsonrpc: "2.0", id: "after", method: "ping" });
    answer.connection.request("POST", "/rpc", Buffer.byteLength(ping), ping);
    expect((await answer.connection.answer()).body).toMatchObject({ id: "after" });

    const wide = await answerToTheStart("POST", "/rpc", wideBody());
    expect(wide.body).toMatchObject({ id: null, error: { code: -32600, data: { limit: MAX_JSON_VALUES } } });
  });

  it("is refused by POST /mcp before the rest of it arrives, answering the request's id", async () => {
    const answer = await answerToTheStart("POST", "/mcp", deepRequest("deep-2", "initialize"));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ jsonrpc: "2.0", id: "deep-2", error: { code: -32600, message: `Invalid Request: a message nested more than ${MAX_JSON_DEPTH} levels deep (the gateway's limit) was refused`, data: { limit: MAX_JSON_DEPTH } } });
  });

  it("is refused by a route with the gateway's plain JSON parser before the rest of it arrives", async () => {
    // Under Fastify's default body limit of 1 MiB, which these routes keep.
    const answer = await answerToTheStart("PUT", "/sessions/any/roles/someone", "[".repeat(SENT), 1_000_000);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ message: `body refused: nested more than ${MAX_JSON_DEPTH} levels deep (the gateway's limit)` });
  });

  it("is read whole when within the bounds, however it is cut into chunks", async () => {
    // The same nesting in strings, with escaped quotes and backslashes: text, not structure.
    const text = JSON.stringify({ jsonrpc: "2.0", id: "in-bounds", method: "session/list", params: {}, note: `\\"${"[".repeat(SENT)}"\\` });
    const response = await fetch(`${base.origin}/rpc`, { method: "POST", headers: { "content-type": "application/json" }, body: text });
    const answer = (await response.json()) as { id: string; error?: { code: number; message: string } };
    // Read as a message (session/list's parameters are checked), not refused for its shape.
    expect(answer.id).toBe("in-bounds");
    expect(answer.error?.message ?? "").not.toContain("nested more than");
  });
});
