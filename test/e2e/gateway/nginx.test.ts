import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AskTestClient } from "../../support/ask-client.js";
import { listeningOn, nginxBinary, nginxExample, startTestNginx, type TestNginx } from "../../support/nginx.js";
import { freePort } from "../../support/free-port.js";
import { postRpc, startHttpGateway, type HttpGateway } from "../../support/http-gateway.js";
import { SseTestClient } from "../../support/sse-client.js";
import { TauTestClient } from "../../support/tau-client.js";

/**
 * The gateway behind a real nginx, configured with the example from the deployment page
 * (docs/deployment.md, the one users copy): plain HTTP routes, WebSocket upgrades on `/rpc` and `/tau`,
 * server-sent events arriving while the stream stays open, and the client's address reaching the
 * gateway through `X-Forwarded-For` (the gateway trusts only the proxy's address).
 *
 * `.ci/run` installs nginx when it is missing; without it this suite is skipped.
 */

/** The address the test client connects from; nginx connects to the gateway from 127.0.0.1. */
const CLIENT_ADDRESS = "127.0.0.3";

describe.skipIf(!nginxBinary)(`behind nginx${nginxBinary ? "" : " (skipped: nginx is not installed; .ci/run installs it with apt-get)"}`, () => {
  let gateway: HttpGateway;
  let nginx: TestNginx | undefined;
  let base: string;

  beforeAll(async () => {
    gateway = await startHttpGateway({ extra: { trustProxy: ["127.0.0.1"] } });
    const gatewayPort = new URL(gateway.baseUrl).port;
    const port = await freePort();
    const example = nginxExample();
    const site = listeningOn(example, port).replace(/server 127\.0\.0\.1:8080;/, `server 127.0.0.1:${gatewayPort};`);
    expect(site, "the example's listen and upstream lines").not.toBe(example);
    expect(site).toMatch(new RegExp(`listen 127\\.0\\.0\\.1:${port}[ ;]`));
    expect(site).toContain(`server 127.0.0.1:${gatewayPort};`);
    nginx = await startTestNginx(site);
    base = nginx.base;
  });

  afterAll(async () => {
    await nginx?.stop();
    await gateway?.stop();
  });

  it("serves the HTTP routes and POST /rpc through the proxy", async () => {
    const healthz = await fetch(`${base}/healthz`);
    expect(healthz.status).toBe(200);
    expect(await healthz.json()).toEqual({ status: "ok" });
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/schema`)).status).toBe(200);

    const ping = await postRpc(base, { jsonrpc: "2.0", id: 1, method: "ping" });
    expect(ping).toMatchObject({ status: 200, body: { id: 1, result: { status: "ok" } } });
    expect(await postRpc(base, { jsonrpc: "2.0", method: "ping" })).toMatchObject({ status: 204 });
  });

  it("upgrades WebSockets on /rpc and carries a whole turn", async () => {
    const client = await AskTestClient.websocket(`${base.replace("http://", "ws://")}/rpc`);
    try {
      const sessionId = (await client.request("session/create", {})).session.sessionId as string;
      await client.request("session/subscribe", { sessionId });
      await client.request("session/send", { sessionId, content: "through the proxy" });
      const completed = await client.waitForEvent(sessionId, "turn.completed");
      expect(completed.payload).toMatchObject({ response: "You said: through the proxy" });
      expect(client.invalid).toEqual([]);
    } finally {
      client.socket.terminate();
    }
  });

  it("upgrades WebSockets on /tau and relays Tau's protocol", async () => {
    const client = await TauTestClient.connect(`${base.replace("http://", "ws://")}/tau`);
    try {
      expect(client.ready.version).toBe(18);
      await client.initialize();
      expect(await client.call("session.list", {})).toMatchObject({ sessions: expect.any(Array) });
    } finally {
      await client.close();
    }
  });

  it("delivers server-sent events unbuffered: each event arrives while the stream stays open", async () => {
    const created = await postRpc(base, { jsonrpc: "2.0", id: 1, method: "session/create", params: {} });
    const sessionId = created.body.result.session.sessionId as string;
    const stream = await SseTestClient.open(`${base}/rpc/events?sessionId=${sessionId}`);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers["content-type"]).toBe("text/event-stream");
      await stream.waitForEvent("session.created");
      expect(stream.ended).toBe(false);
      await postRpc(base, { jsonrpc: "2.0", id: 2, method: "session/send", params: { sessionId, content: "streamed" } });
      const completed = await stream.waitForEvent("turn.completed");
      expect(completed.payload.response).toBe("You said: streamed");
      expect(stream.ended).toBe(false);
    } finally {
      stream.close();
    }
  });

  it("passes the client's address through X-Forwarded-For, and a client cannot spoof it", async () => {
    const get = (path: string, headers: Record<string, string> = {}) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${base}${path}`, { localAddress: CLIENT_ADDRESS, headers }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("error", reject);
        req.end();
      });
    const addressLogged = (probe: string) => gateway.logs.find((line) => line.req?.url === `/healthz?probe=${probe}`)?.req?.remoteAddress;

    const plain = randomUUID();
    expect(await get(`/healthz?probe=${plain}`)).toBe(200);
    expect(addressLogged(plain)).toBe(CLIENT_ADDRESS);

    // The client's own X-Forwarded-For is only a claim: nginx appends the real address, and the
    // gateway trusts only the proxy, so the first untrusted hop is the client nginx saw.
    const spoofed = randomUUID();
    expect(await get(`/healthz?probe=${spoofed}`, { "x-forwarded-for": "198.51.100.9" })).toBe(200);
    expect(addressLogged(spoofed)).toBe(CLIENT_ADDRESS);
  });
});
