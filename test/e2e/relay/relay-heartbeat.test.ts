import { describe, expect, it } from "vitest";
import { GatewayRelay } from "../../../src/relay/gateway-relay.js";
import { ASK_RELAY } from "../../../src/cli/dialects/ask/relay.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startOperatedGateway, waitUntil } from "../../support/operated-gateway.js";
import { startTcpProxy } from "../../support/tcp-proxy.js";

/**
 * The client side of a `--remote` relay's WebSocket to the gateway: when the gateway stops
 * answering (a network that black-holes the flow, a machine gone without a FIN), the relay's
 * pings go unanswered and the link is taken as lost at the next ping, instead of when TCP gives up
 * minutes later; the relay then says so and reconnects.
 */

const cleanups = cleanupsAfterEach();

describe("relay link keepalive", () => {
  it("terminates a link to a gateway that stopped answering pings, at the next ping, and reconnects", async () => {
    const gw = await cleanups.stopAfterTest(startOperatedGateway());
    const { port } = new URL(gw.httpUrl);
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(port) }, cleanups);
    const logs: Array<{ message: string; fields?: Record<string, unknown> }> = [];
    const relay = await GatewayRelay.open({
      dialect: ASK_RELAY,
      url: `ws://127.0.0.1:${proxy.port}/rpc`,
      log: (_level, message, fields) => logs.push({ message, fields }),
      holdMs: 30_000,
      heartbeatMs: 200,
    });
    cleanups.push(() => relay.close());
    const lines: string[] = [];
    const connection = relay.connection((line) => lines.push(line));
    await connection.receive(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { client: { name: "relay-heartbeat", version: "1" } } }));
    await waitUntil(() => lines.some((line) => JSON.parse(line).id === 1), "the initialize answer");

    proxy.blackhole();
    // Terminated by the relay itself (1006: no close handshake through a black hole).
    await waitUntil(() => logs.some((l) => l.message.includes("connection to the gateway was lost") && l.fields?.code === 1006), "the relay to give the silent link up");
    proxy.heal();

    // A new link: a request is answered again.
    await waitUntil(async () => {
      await connection.receive(JSON.stringify({ jsonrpc: "2.0", id: `p${lines.length}`, method: "ping" }));
      return lines.some((line) => (JSON.parse(line) as { result?: { status?: string } }).result?.status === "ok");
    }, "a ping answered on the new link", 25_000);
  });
});
