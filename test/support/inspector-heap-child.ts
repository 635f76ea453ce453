/**
 * Run as `node --expose-gc --import tsx inspector-heap-child.ts`: feeds an inspector hub with its
 * default limits as 100 busy connections would (each up to its own bound of bytes), closes them,
 * collects garbage and prints how much the heap grew, in MiB, as JSON on stdout.
 */
import { DEFAULT_INSPECTOR_LIMITS, InspectorHub } from "../../src/gateway/inspector/inspector-hub.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");
const heapUsed = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const hub = new InspectorHub(DEFAULT_INSPECTOR_LIMITS);
const before = heapUsed();
const FRAME_BYTES = 100 * 1024;
const frames = Math.ceil(DEFAULT_INSPECTOR_LIMITS.maxBytes / FRAME_BYTES);
const connections = Array.from({ length: 100 }, () => hub.connection("ask", "websocket /rpc"));
for (let i = 0; i < frames; i++) {
  for (const [n, connection] of connections.entries()) {
    // Each its own string, as frames read from sockets are.
    connection.client(JSON.stringify({ jsonrpc: "2.0", method: "note", params: { n, i, pad: String(i % 10).repeat(FRAME_BYTES) } }));
  }
}
const busy = heapUsed();
for (const connection of connections) connection.close();
const closed = heapUsed();
process.stdout.write(`${JSON.stringify({ busyMiB: (busy - before) / 2 ** 20, closedMiB: (closed - before) / 2 ** 20, kept: hub.bytes })}\n`);
