import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { MESSAGES_IN_FLIGHT_BOUND, READ_ON_IN_FLIGHT } from "../../src/transports/in-flight-bound.js";
import { pumpWebSocketMessages } from "../../src/transports/websocket-endpoint.js";

/**
 * The pump every WebSocket dialect route shares, on a real ws server and client over loopback:
 * a flood of messages whose handling does not settle stops being read at the bound and is read on,
 * in order and whole, as the handling catches up.
 */

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** Resolves once `condition` holds, checking after each message the server side takes. */
function until(condition: () => boolean, wake: Set<() => void>): Promise<void> {
  if (condition()) return Promise.resolve();
  return new Promise((resolve) => {
    const check = () => {
      if (!condition()) return;
      wake.delete(check);
      resolve();
    };
    wake.add(check);
  });
}

describe("pumpWebSocketMessages", () => {
  it("stops reading while MESSAGES_IN_FLIGHT_BOUND messages are unsettled and reads on, in order, once READ_ON_IN_FLIGHT are left", async () => {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await once(server, "listening");
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const received: string[] = [];
    const waiting: Array<() => void> = [];
    const wake = new Set<() => void>();
    const accepted = new Promise<WebSocket>((resolve) =>
      server.on("connection", (socket) => {
        pumpWebSocketMessages(socket, {
          receive: (text) => {
            received.push(text);
            for (const check of [...wake]) check();
            return new Promise<void>((settle) => waiting.push(settle));
          },
          close: () => undefined,
        });
        resolve(socket);
      }),
    );
    const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    closers.push(async () => client.terminate());
    await once(client, "open");
    const serverSide = await accepted;

    // About 1 KiB each: one read off the socket brings far fewer than the bound, so the pause shows.
    const total = MESSAGES_IN_FLIGHT_BOUND * 3;
    const message = (i: number) => `m${i}:${"x".repeat(1024)}`;
    for (let i = 0; i < total; i++) client.send(message(i));
    await until(() => received.length >= MESSAGES_IN_FLIGHT_BOUND, wake);
    expect(serverSide.isPaused).toBe(true);
    // What the socket had already read when it paused is still handed on: in flight, like the rest.
    const taken = received.length;
    expect(taken).toBeGreaterThanOrEqual(MESSAGES_IN_FLIGHT_BOUND);
    expect(taken).toBeLessThan(total);

    // Down to one more than READ_ON_IN_FLIGHT in flight: still paused. One more settled: reading goes on.
    for (const settle of waiting.splice(0, taken - READ_ON_IN_FLIGHT - 1)) settle();
    await new Promise((resolve) => setImmediate(resolve));
    expect(received).toHaveLength(taken);
    expect(serverSide.isPaused).toBe(true);
    waiting.shift()!();
    await until(() => received.length > taken, wake);

    // Settling as they come, everything arrives once and in order.
    const settleAll = () => {
      for (const settle of waiting.splice(0)) settle();
    };
    const drain = setInterval(settleAll, 1);
    closers.push(async () => clearInterval(drain));
    await until(() => received.length === total, wake);
    expect(received).toEqual(Array.from({ length: total }, (_, i) => message(i)));
  });
});
