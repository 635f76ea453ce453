import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { buildGateway } from "../../../src/gateway/app.js";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { startTauHost } from "../../../src/host/index.js";
import { TauUpstream } from "../../../src/tau/upstream.js";
import { AskTestClient } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startSecureGateway, tryUpgrade, type UpgradeOutcome } from "../../support/secure-gateway.js";
import { TauTestClient } from "../../support/tau-client.js";

/**
 * The front door: bearer tokens on every route but the health probes and on WebSocket upgrades
 * (refused with HTTP 401 before any upgrade), the Origin allowlist and CORS, request ids and the
 * client address in logs, and secrets — the clients' tokens and the upstream token — never in a
 * log line or anything sent to a client.
 */

const cleanups = cleanupsAfterEach();

const gateway = (options: Parameters<typeof startSecureGateway>[0] = {}) => cleanups.stopAfterTest(startSecureGateway(options));

function opened(outcome: UpgradeOutcome): WebSocket {
  if (!outcome.opened) throw new Error(`upgrade refused with ${outcome.status}: ${outcome.body}`);
  cleanups.push(() => outcome.socket.terminate());
  return outcome.socket;
}

const TOKEN = "tok-Alpha-7f3c9e";
const single = () => TokenRegistry.single(TOKEN);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("bearer tokens on HTTP routes", () => {
  it("refuses requests without a token or with a wrong one (401, WWW-Authenticate: Bearer) and accepts header and query forms", async () => {
    const { app } = await gateway({ tokens: single() });

    const none = await app.inject({ method: "GET", url: "/schema" });
    expect(none.statusCode).toBe(401);
    expect(none.headers["www-authenticate"]).toBe('Bearer realm="tau-gateway"');
    expect(none.json()).toEqual({ error: "unauthorized", message: "a bearer token is required" });

    const wrong = await app.inject({ method: "GET", url: "/schema", headers: bearer("tok-Alpha-7f3c9f") });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers["www-authenticate"]).toBe('Bearer realm="tau-gateway", error="invalid_token"');
    const wrongQuery = await app.inject({ method: "GET", url: "/schema?access_token=nope" });
    expect(wrongQuery.statusCode).toBe(401);
    const basic = await app.inject({ method: "GET", url: "/schema", headers: { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` } });
    expect(basic.statusCode).toBe(401);
    // A prefix of the right token is a wrong token.
    expect((await app.inject({ method: "GET", url: "/schema", headers: bearer(TOKEN.slice(0, -1)) })).statusCode).toBe(401);

    expect((await app.inject({ method: "GET", url: "/schema", headers: bearer(TOKEN) })).statusCode).toBe(200);
    expect((await app.inject({ method: "GET", url: "/schema", headers: { authorization: `bearer  ${TOKEN}` } })).statusCode).toBe(200);
    expect((await app.inject({ method: "GET", url: `/schema?access_token=${encodeURIComponent(TOKEN)}` })).statusCode).toBe(200);
  });

  it("leaves /healthz and /readyz open, and hides which other paths exist from unauthenticated callers", async () => {
    const { app } = await gateway({ tokens: single() });
    expect((await app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
    expect((await app.inject({ method: "GET", url: "/readyz" })).statusCode).toBe(200);
    expect((await app.inject({ method: "GET", url: "/healthz?x=1" })).statusCode).toBe(200);
    expect((await app.inject({ method: "GET", url: "/no-such-route" })).statusCode).toBe(401);
    expect((await app.inject({ method: "GET", url: "/no-such-route", headers: bearer(TOKEN) })).statusCode).toBe(404);
  });

  it("accepts entries of a tokens file given as plain tokens and as SHA-256 digests", async () => {
    const digest = createHash("sha256").update("tok-Bravo-41aa", "utf8").digest("hex");
    const tokens = TokenRegistry.parse(
      JSON.stringify([
        { id: "alpha", token: TOKEN, tenant: "a" },
        { id: "bravo", sha256: digest.toUpperCase(), tenant: "b" },
      ]),
      "tokens.json",
    );
    const { app } = await gateway({ tokens });
    expect((await app.inject({ method: "GET", url: "/schema", headers: bearer(TOKEN) })).statusCode).toBe(200);
    expect((await app.inject({ method: "GET", url: "/schema", headers: bearer("tok-Bravo-41aa") })).statusCode).toBe(200);
    // The digest itself is not a token.
    expect((await app.inject({ method: "GET", url: "/schema", headers: bearer(digest) })).statusCode).toBe(401);
  });

  it("without tokens every route is open (loopback use; the CLI refuses other addresses)", async () => {
    const { app } = await gateway();
    expect((await app.inject({ method: "GET", url: "/schema" })).statusCode).toBe(200);
  });
});

describe("bearer tokens on WebSocket upgrades", () => {
  for (const path of ["/rpc", "/tau"]) {
    it(`refuses ${path} upgrades without a valid token with HTTP 401 before upgrading`, async () => {
      const gw = await gateway({ tokens: single() });
      for (const headers of [{}, bearer("wrong-token"), { authorization: "Basic eDp5" }]) {
        const outcome = await tryUpgrade(gw.wsUrl(path), headers);
        expect(outcome).toMatchObject({ opened: false, status: 401 });
        if (!outcome.opened) expect(outcome.headers["www-authenticate"]).toMatch(/^Bearer realm="tau-gateway"/);
      }
      const query = await tryUpgrade(gw.wsUrl(`${path}?access_token=wrong-token`));
      expect(query).toMatchObject({ opened: false, status: 401 });
      // Nothing was relayed: a refused /tau client never got an upstream connection.
      expect(gw.app.tauPassthrough.connections).toBe(0);
    });
  }

  it("accepts /tau and /rpc with the token as a Bearer header or as ?access_token=", async () => {
    const gw = await gateway({ tokens: single() });

    const tau = await TauTestClient.connect(`${gw.wsUrl("/tau")}?access_token=${TOKEN}`);
    cleanups.push(() => tau.close());
    expect(tau.ready).toMatchObject({ version: 18, type: "ready" });
    expect(await tau.call("session.list", {})).toMatchObject({ sessions: expect.any(Array) });

    const ask = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: bearer(TOKEN) });
    cleanups.push(() => ask.socket.terminate());
    expect(await ask.request("initialize", { client: { name: "auth-tests", version: "1" } })).toMatchObject({ protocolVersion: "1.0" });

    const askQuery = opened(await tryUpgrade(`${gw.wsUrl("/rpc")}?access_token=${encodeURIComponent(TOKEN)}`));
    expect(askQuery.readyState).toBe(1);
  });
});

describe("Origin allowlist and CORS", () => {
  const APP = "https://app.example.com";

  it("refuses a WebSocket upgrade from a disallowed Origin with 403 even with a valid token, and allows listed and absent Origins", async () => {
    const gw = await gateway({ tokens: single(), allowedOrigins: [APP] });
    for (const path of ["/rpc", "/tau"]) {
      const evil = await tryUpgrade(gw.wsUrl(path), { ...bearer(TOKEN), origin: "https://evil.example.net" });
      expect(evil).toMatchObject({ opened: false, status: 403 });
      const nullOrigin = await tryUpgrade(gw.wsUrl(path), { ...bearer(TOKEN), origin: "null" });
      expect(nullOrigin).toMatchObject({ opened: false, status: 403 });
      opened(await tryUpgrade(gw.wsUrl(path), { ...bearer(TOKEN), origin: APP }));
      opened(await tryUpgrade(gw.wsUrl(path), bearer(TOKEN)));
    }
    // An allowed Origin still needs a token.
    expect(await tryUpgrade(gw.wsUrl("/rpc"), { origin: APP })).toMatchObject({ opened: false, status: 401 });
  });

  it("refuses every browser Origin when no origins are configured", async () => {
    const gw = await gateway({ tokens: single() });
    expect(await tryUpgrade(gw.wsUrl("/rpc"), { ...bearer(TOKEN), origin: "http://127.0.0.1:3000" })).toMatchObject({ opened: false, status: 403 });
    expect((await gw.app.inject({ method: "GET", url: "/schema", headers: { ...bearer(TOKEN), origin: APP } })).statusCode).toBe(403);
  });

  it("answers CORS preflights of allowed origins without credentials and adds CORS headers to their requests", async () => {
    const { app } = await gateway({ tokens: single(), allowedOrigins: [APP, "http://localhost:5173"] });
    const preflight = await app.inject({
      method: "OPTIONS",
      url: "/rpc",
      headers: { origin: APP, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers["access-control-allow-origin"]).toBe(APP);
    expect(String(preflight.headers["access-control-allow-headers"]).toLowerCase()).toContain("authorization");

    const refused = await app.inject({ method: "OPTIONS", url: "/rpc", headers: { origin: "https://evil.example.net", "access-control-request-method": "POST" } });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers["access-control-allow-origin"]).toBeUndefined();

    const get = await app.inject({ method: "GET", url: "/schema", headers: { ...bearer(TOKEN), origin: "http://localhost:5173" } });
    expect(get.statusCode).toBe(200);
    expect(get.headers["access-control-allow-origin"]).toBe("http://localhost:5173");
    expect(get.headers.vary).toMatch(/origin/i);
  });

  it("with * allows any Origin", async () => {
    const gw = await gateway({ tokens: single(), allowedOrigins: "*" });
    opened(await tryUpgrade(gw.wsUrl("/tau"), { ...bearer(TOKEN), origin: "https://anything.example.org" }));
    const get = await gw.app.inject({ method: "GET", url: "/schema", headers: { ...bearer(TOKEN), origin: "https://anything.example.org" } });
    expect(get.headers["access-control-allow-origin"]).toBe("*");
  });
});

describe("logs", () => {
  it("never contain a client token or the upstream token, from query strings, headers or failed attempts", async () => {
    const wrong = "tok-Wrong-55d1e0";
    const upstreamToken = "up-Secret-9b2e77";
    const gw = await gateway({ tokens: single(), upstreamToken });

    await gw.app.inject({ method: "GET", url: `/schema?access_token=${TOKEN}&x=1` });
    await gw.app.inject({ method: "GET", url: "/schema", headers: bearer(TOKEN) });
    await gw.app.inject({ method: "GET", url: `/schema?ACCESS_TOKEN=${wrong}` });
    await gw.app.inject({ method: "GET", url: `/schema?access_token=${wrong}` });
    await gw.app.inject({ method: "GET", url: "/schema", headers: { ...bearer(wrong), cookie: `t=${wrong}` } });
    await gw.app.inject({ method: "GET", url: `/readyz?tau_token=${upstreamToken}` });
    await tryUpgrade(`${gw.wsUrl("/tau")}?access_token=${wrong}`);

    const tau = await TauTestClient.connect(`${gw.wsUrl("/tau")}?access_token=${TOKEN}`);
    cleanups.push(() => tau.close());
    await tau.call("initialize", { client: { name: "log-tests", version: "1" } });
    const sessionId = (await tau.call<{ sessionId: string }>("session.create", { executionEnvironment: { kind: "local", cwd: gw.cwd }, attributes: {} })).sessionId;
    await tau.call("session.observe", { sessionId });
    const ask = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: bearer(TOKEN) });
    cleanups.push(() => ask.socket.terminate());
    await ask.request("initialize", { client: { name: "log-tests", version: "1" } });
    await ask.request("session/list", {});
    await tau.close();
    ask.socket.close();
    await gw.app.close();

    const logs = gw.logText();
    // The test would prove nothing if the lines it inspects did not exist.
    expect(logs).toContain('"url":"/schema?access_token=REDACTED&x=1"');
    expect(logs).toContain("/tau?access_token=REDACTED");
    expect(logs).toContain("unauthenticated request refused");
    for (const secret of [TOKEN, wrong, upstreamToken]) expect(logs).not.toContain(secret);
  });

  it("give every request an id (answered in X-Request-Id) and the client address, from X-Forwarded-For only behind a trusted proxy", async () => {
    const untrusting = await gateway({ tokens: single() });
    const direct = await untrusting.app.inject({ method: "GET", url: "/schema", headers: { ...bearer(TOKEN), "x-forwarded-for": "203.0.113.7", "x-request-id": "chosen-by-client" } });
    const directId = String(direct.headers["x-request-id"]);
    expect(directId).toMatch(/^[0-9a-f-]{36}$/);
    const lineOf = (logs: string, id: string) =>
      logs
        .split("\n")
        .filter((l) => l.includes(`"reqId":"${id}"`) && l.includes('"req":'))
        .map((l) => JSON.parse(l) as { req: { remoteAddress: string } })[0];
    expect(lineOf(untrusting.logText(), directId)?.req.remoteAddress).toBe("127.0.0.1");

    const trusting = await gateway({ tokens: single(), trustProxy: ["127.0.0.1"] });
    const proxied = await trusting.app.inject({ method: "GET", url: "/schema", headers: { ...bearer(TOKEN), "x-forwarded-for": "203.0.113.7", "x-request-id": "nginx-5f2a" } });
    expect(proxied.headers["x-request-id"]).toBe("nginx-5f2a");
    expect(lineOf(trusting.logText(), "nginx-5f2a")?.req.remoteAddress).toBe("203.0.113.7");
  });
});

describe("the upstream token", () => {
  it("is never sent to clients, not even when the upstream refuses it", async () => {
    const host = await startTauHost({ port: 0, authToken: "right-Upstream-31c4" });
    cleanups.push(() => host.close());
    const wrong = "wrong-Upstream-8e0d";
    const upstream = new TauUpstream({ url: host.url, token: wrong, client: { name: "auth-tests", version: "1" }, reconnect: false });
    cleanups.push(() => upstream.close());
    await expect(upstream.start()).rejects.toThrow();
    const app = buildGateway({ tauUpstream: { url: host.url, token: wrong }, upstream, tokens: single() });
    cleanups.push(() => app.close());
    const address = await app.listen({ host: "127.0.0.1", port: 0 });

    const readyz = await app.inject({ method: "GET", url: "/readyz" });
    expect(readyz.statusCode).toBe(503);
    expect(readyz.body).not.toContain(wrong);

    const tau = opened(await tryUpgrade(`${address.replace("http://", "ws://")}/tau`, bearer(TOKEN)));
    const received: string[] = [];
    tau.on("message", (data) => received.push(data.toString()));
    const closed = await new Promise<{ code: number; reason: string }>((resolve) => tau.on("close", (code, reason) => resolve({ code, reason: reason.toString() })));
    expect(closed.code).not.toBe(1000);
    expect(closed.reason).toMatch(/upstream/i);
    for (const text of [closed.reason, ...received]) expect(text).not.toContain(wrong);
  });
});
