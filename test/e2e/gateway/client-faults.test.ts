import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import WebSocket from "ws";
import { expect, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startHttpGateway, type HttpGateway } from "../../support/http-gateway.js";
import { parsePrometheus, sampleValue } from "../../support/prometheus.js";

/**
 * Frames `ws` refuses are the client's fault: the connection is closed with the code the protocol
 * prescribes, the fault is counted, and the log gets one line per connection, without a stack,
 * however many bad frames the client sends.
 */

const cleanups = cleanupsAfterEach();

/** Text frames whose payload is not UTF-8 (a lone continuation byte, an overlong form, a stray 0xFF). */
const INVALID_UTF8 = [Buffer.from([0x80]), Buffer.from([0xc0, 0xaf]), Buffer.from([0x7b, 0xff, 0x7d])];

/** Opens a WebSocket whose log lines carry `requestId` (the gateway trusts the proxy header in these tests). */
async function open(gw: HttpGateway, path: string, requestId: string): Promise<WebSocket> {
  const socket = new WebSocket(`${gw.baseUrl.replace("http://", "ws://")}${path}`, { headers: { "x-request-id": requestId } });
  cleanups.push(() => socket.terminate());
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  return socket;
}

const closed = (socket: WebSocket) =>
  new Promise<{ code: number; reason: string }>((resolve) => socket.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));

/**
 * Upgrades a plain TCP connection by hand and writes `frame` (a client must mask its frames), so
 * the test can send what no WebSocket library would; resolves with the close code the gateway sends.
 */
async function sendRawFrame(gw: HttpGateway, path: string, requestId: string, frame: Buffer): Promise<number> {
  const { hostname, port } = new URL(gw.baseUrl);
  const socket = connect(Number(port), hostname);
  cleanups.push(() => socket.destroy());
  let received = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${Buffer.from(randomUUID().slice(0, 16)).toString("base64")}\r\nSec-WebSocket-Version: 13\r\nX-Request-Id: ${requestId}\r\n\r\n`,
  );
  const headEnd = () => received.indexOf("\r\n\r\n");
  for (let i = 0; i < 200 && headEnd() < 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(received.subarray(0, 12).toString()).toBe("HTTP/1.1 101");
  received = received.subarray(headEnd() + 4);
  socket.write(frame);
  await new Promise((resolve) => socket.once("close", resolve));
  // Frames the server sent after the upgrade (a /tau `ready` first); the close frame is the last.
  let offset = 0;
  let closeCode = -1;
  while (offset + 2 <= received.length) {
    const opcode = received[offset]! & 0x0f;
    let length = received[offset + 1]! & 0x7f;
    let start = offset + 2;
    if (length === 126) [length, start] = [received.readUInt16BE(offset + 2), offset + 4];
    else if (length === 127) [length, start] = [Number(received.readBigUInt64BE(offset + 2)), offset + 10];
    if (opcode === 0x8) closeCode = received.readUInt16BE(start);
    offset = start + length;
  }
  return closeCode;
}

const faults = async (gw: HttpGateway, route: string, kind: string) =>
  sampleValue(parsePrometheus(await (await fetch(`${gw.baseUrl}/metrics`)).text()), "tau_gateway_client_faults_total", { route, kind });

for (const path of ["/rpc", "/tau"]) {
  it(`${path}: invalid UTF-8 closes the connection with 1007, counted once and logged once without a stack`, async () => {
    const gw = await cleanups.stopAfterTest(startHttpGateway({ extra: { trustProxy: true } }));
    const connections = 5;
    for (let c = 0; c < connections; c++) {
      const requestId = `faulty-${randomUUID()}`;
      const socket = await open(gw, path, requestId);
      const close = closed(socket);
      // Many bad frames written at once: they reach the gateway together, before it closes.
      for (let i = 0; i < 300; i++) socket.send(INVALID_UTF8[i % INVALID_UTF8.length]!, { binary: false });
      expect((await close).code).toBe(1007);

      const lines = gw.logs.filter((line) => line.reqId === requestId && line.msg !== "incoming request" && line.msg !== "request completed");
      expect(lines, JSON.stringify(lines)).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 30, route: path, kind: "invalid_utf8", code: "WS_ERR_INVALID_UTF8" });
      expect(lines[0]!.msg).toBe("client sent a text message that is not valid UTF-8: connection closed with 1007");
      expect(JSON.stringify(lines[0])).not.toMatch(/stack|    at /);
    }
    expect(await faults(gw, path, "invalid_utf8")).toBe(connections);
    // Nothing anywhere in the log carries a stack or rises above info for these clients.
    expect(gw.logs.filter((line) => line.level > 30 || JSON.stringify(line).includes("stack"))).toEqual([]);

    // The gateway still serves that route.
    const healthy = await open(gw, path, "healthy");
    const reply = new Promise<string>((resolve) => healthy.once("message", (data) => resolve(data.toString())));
    if (path === "/rpc") healthy.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }));
    expect(await reply).toMatch(path === "/rpc" ? /"status":"ok"/ : /"type":"ready"/);
  });
}

it("counts other broken frames as protocol faults and oversized messages as oversized", async () => {
  const gw = await cleanups.stopAfterTest(startHttpGateway({ maxMessageBytes: 1024, extra: { trustProxy: true } }));
  const oversized = await open(gw, "/rpc", "oversized");
  const oversizedClose = closed(oversized);
  oversized.send("x".repeat(2048));
  expect((await oversizedClose).code).toBe(1009);

  // A frame with a reserved opcode (0x3), which no WebSocket library sends: ws closes with 1002.
  expect(await sendRawFrame(gw, "/tau", "broken", Buffer.from([0x83, 0x80, 0, 0, 0, 0]))).toBe(1002);

  expect(await faults(gw, "/rpc", "oversized")).toBe(1);
  expect(await faults(gw, "/tau", "protocol")).toBe(1);
  for (const [requestId, route, kind, code] of [["oversized", "/rpc", "oversized", 1009], ["broken", "/tau", "protocol", 1002]] as const) {
    const lines = gw.logs.filter((line) => line.reqId === requestId && line.msg !== "incoming request" && line.msg !== "request completed");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, route, kind });
    expect(lines[0]!.msg).toMatch(new RegExp(`connection closed with ${code}$`));
  }
});
