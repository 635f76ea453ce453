import { describe, expect, it } from "vitest";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { INSPECTOR_CSP } from "../../../src/gateway/inspector/inspector-routes.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startInspectorGateway } from "../../support/inspector-gateway.js";

/**
 * Who may open `serve --inspector` (it shows every frame of every client): nobody unless it is
 * switched on; then only under the gateway's own host names, from its own page, and with tokens
 * only to a valid token (an operator's sees everything, a tenant's its own: inspector-tenants),
 * without them only a peer on this machine reached directly.
 */

const cleanups = cleanupsAfterEach();
const OPERATOR = "operator-secret-1";
const TENANT = "tenant-secret-2";
const tokens = () =>
  TokenRegistry.parse(
    JSON.stringify([
      { id: "ops", token: OPERATOR, tenant: "ops", operator: true },
      { id: "alice", token: TENANT, tenant: "alice" },
    ]),
    "tokens.json",
  );
const LOCAL = { host: "127.0.0.1:8080", remoteAddress: "127.0.0.1" };

describe("the inspector without tokens", () => {
  it("does not exist unless switched on", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ inspector: false }));
    for (const url of ["/inspector", "/inspector/feed", "/inspector/api/connections"]) {
      expect((await gw.app.inject({ url, headers: { host: LOCAL.host }, remoteAddress: LOCAL.remoteAddress })).statusCode).toBe(404);
    }
  });

  it("serves its page to loopback with a strict Content-Security-Policy and no inline script", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const page = await gw.app.inject({ url: "/inspector", headers: { host: LOCAL.host }, remoteAddress: LOCAL.remoteAddress });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toBe(INSPECTOR_CSP);
    expect(INSPECTOR_CSP).toContain("default-src 'self'; script-src 'self'");
    expect(page.headers["x-frame-options"]).toBe("DENY");
    // Every script is a file of the page; no inline script, handler or style attribute.
    expect(page.body.match(/<script\b[^>]*>/g)).toEqual(['<script type="module" src="/inspector/static/app.js">']);
    expect(page.body).not.toMatch(/\son\w+=|\sstyle=|<style/i);
    const script = await gw.app.inject({ url: "/inspector/static/app.js", headers: { host: LOCAL.host }, remoteAddress: LOCAL.remoteAddress });
    expect(script.statusCode).toBe(200);
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(script.headers["content-security-policy"]).toBe(INSPECTOR_CSP);
    const api = await gw.app.inject({ url: "/inspector/api/connections", headers: { host: "localhost:8080" }, remoteAddress: "::1" });
    expect(api.statusCode).toBe(200);
    expect(api.json()).toEqual({ connections: [] });
  });

  it("serves only the page's own files", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    for (const file of ["..%2Fpackage.json", "filter.d.ts", "index.html", "nope.js"]) {
      const response = await gw.app.inject({ url: `/inspector/static/${file}`, headers: { host: LOCAL.host }, remoteAddress: LOCAL.remoteAddress });
      expect(response.statusCode, file).toBe(404);
    }
  });

  it("refuses a peer that is not on this machine, and anything that came through a proxy", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    for (const remoteAddress of ["10.1.2.3", "192.168.0.7", "2001:db8::1"]) {
      const response = await gw.app.inject({ url: "/inspector", headers: { host: LOCAL.host }, remoteAddress });
      expect(response.statusCode, remoteAddress).toBe(403);
      expect(response.json()).toMatchObject({ error: "forbidden_peer" });
    }
    const proxied = await gw.app.inject({ url: "/inspector/api/connections", headers: { host: LOCAL.host, "x-forwarded-for": "203.0.113.9" }, remoteAddress: "127.0.0.1" });
    expect(proxied.statusCode).toBe(403);
    const forwarded = await gw.app.inject({ url: "/inspector/api/connections", headers: { host: LOCAL.host, forwarded: "for=203.0.113.9" }, remoteAddress: "127.0.0.1" });
    expect(forwarded.statusCode).toBe(403);
  });

  it("refuses a foreign Host header (DNS rebinding) and another page's Origin", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ hosts: ["inspector.example"] }));
    for (const host of ["evil.example:8080", "evil.example", "127.0.0.1.evil.example", "a b"]) {
      const response = await gw.app.inject({ url: "/inspector", headers: { host }, remoteAddress: "127.0.0.1" });
      expect(response.statusCode, host).toBe(403);
    }
    expect((await gw.app.inject({ url: "/inspector", headers: { host: "inspector.example" }, remoteAddress: "127.0.0.1" })).statusCode).toBe(200);
    expect((await gw.app.inject({ url: "/inspector", headers: { host: "[::1]:8080" }, remoteAddress: "::1" })).statusCode).toBe(200);
    // Only the page's own origin: never another page, not even a loopback one on another port.
    for (const origin of ["http://evil.example", "http://127.0.0.1:9999", "null"]) {
      const foreign = await gw.app.inject({ url: "/inspector/api/connections", headers: { host: LOCAL.host, origin }, remoteAddress: "127.0.0.1" });
      expect(foreign.statusCode, origin).toBe(403);
      expect(foreign.json()).toMatchObject({ error: "forbidden_origin" });
    }
    const own = await gw.app.inject({ url: "/inspector/static/app.js", headers: { host: LOCAL.host, origin: `http://${LOCAL.host}` }, remoteAddress: "127.0.0.1" });
    expect(own.statusCode).toBe(200);
  });
});

describe("the inspector with tokens", () => {
  it("serves the page's files without a token but its data only with a valid one", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ tokens: tokens() }));
    const remote = { remoteAddress: "10.9.8.7" };
    expect((await gw.app.inject({ url: "/inspector", headers: { host: LOCAL.host }, ...remote })).statusCode).toBe(200);
    expect((await gw.app.inject({ url: "/inspector/static/feed.js", headers: { host: LOCAL.host }, ...remote })).statusCode).toBe(200);

    const missing = await gw.app.inject({ url: "/inspector/api/connections", headers: { host: LOCAL.host }, ...remote });
    expect(missing.statusCode).toBe(401);
    const feed = await gw.app.inject({ url: "/inspector/feed", headers: { host: LOCAL.host }, ...remote });
    expect(feed.statusCode).toBe(401);
    const wrong = await gw.app.inject({ url: "/inspector/api/connections", headers: { host: LOCAL.host, authorization: "Bearer nope" }, ...remote });
    expect(wrong.statusCode).toBe(401);
    // A tenant's token opens it too, to see its own traffic (inspector-tenants.test.ts).
    const tenant = await gw.app.inject({ url: "/inspector/api/viewer", headers: { host: LOCAL.host, authorization: `Bearer ${TENANT}` }, ...remote });
    expect(tenant.statusCode).toBe(200);
    expect(tenant.json()).toEqual({ operator: false, tenant: "alice" });
    const rebuffed = await gw.app.inject({ url: "/inspector/api/connections", headers: { host: "evil.example", authorization: `Bearer ${TENANT}` }, ...remote });
    expect(rebuffed.statusCode).toBe(403);
    const operator = await gw.app.inject({ url: "/inspector/api/connections", headers: { host: LOCAL.host, authorization: `Bearer ${OPERATOR}` }, ...remote });
    expect(operator.statusCode).toBe(200);
    // The operator's token does not open a foreign Host either.
    const rebound = await gw.app.inject({ url: "/inspector/api/connections", headers: { host: "evil.example", authorization: `Bearer ${OPERATOR}` }, ...remote });
    expect(rebound.statusCode).toBe(403);
  });

  it("reads operator from the tokens file and refuses a value that is not true or false", () => {
    const registry = tokens();
    expect(registry.authenticate(OPERATOR)).toEqual({ tokenId: "ops", tenant: "ops", operator: true });
    expect(registry.authenticate(TENANT)).toEqual({ tokenId: "alice", tenant: "alice" });
    expect(TokenRegistry.single("x").authenticate("x")?.operator).toBeUndefined();
    expect(() => TokenRegistry.parse(JSON.stringify([{ id: "a", token: "t", tenant: "a", operator: "yes" }]), "f.json")).toThrow(/entry 0 \(id "a"\) \/operator: must be of type boolean/);
  });
});
