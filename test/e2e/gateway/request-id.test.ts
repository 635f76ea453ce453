import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startSecureGateway } from "../../support/secure-gateway.js";

/**
 * `X-Request-Id` is taken from a request only when the peer that sent it is one of the trusted
 * proxies (`--trust-proxy`), by the same address matching that decides whether X-Forwarded-For is
 * believed; a client reaching the gateway directly gets a fresh id it did not choose.
 */

const cleanups = cleanupsAfterEach();
const gateway = (trustProxy?: boolean | string[]) => cleanups.stopAfterTest(startSecureGateway({ trustProxy }));

const FRESH = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** GET /healthz from a real socket on 127.0.0.1, carrying an X-Request-Id; the id the gateway answers with. */
async function idOverSocket(baseUrl: string, requestId: string): Promise<string | null> {
  const response = await fetch(`${baseUrl}/healthz`, { headers: { "x-request-id": requestId } });
  await response.arrayBuffer();
  return response.headers.get("x-request-id");
}

describe("X-Request-Id", () => {
  it("is not taken from a directly connected client when the trusted proxies are other addresses", async () => {
    const gw = await gateway(["192.0.2.10"]);
    // A real connection from 127.0.0.1, which is not in the list.
    const answered = await idOverSocket(gw.baseUrl, "chosen-by-client");
    expect(answered).toMatch(FRESH);
    // The same through the request path with the peer address set explicitly.
    const direct = await gw.app.inject({ method: "GET", url: "/healthz", remoteAddress: "198.51.100.7", headers: { "x-request-id": "chosen-by-client" } });
    expect(direct.headers["x-request-id"]).toMatch(FRESH);
    // The log line of that request carries the fresh id, not the client's.
    expect(gw.logText()).not.toContain('"reqId":"chosen-by-client"');
  });

  it("is taken from a listed proxy address or a peer inside a listed range", async () => {
    const gw = await gateway(["192.0.2.10", "10.0.0.0/8"]);
    const fromProxy = await gw.app.inject({ method: "GET", url: "/healthz", remoteAddress: "192.0.2.10", headers: { "x-request-id": "nginx-5f2a" } });
    expect(fromProxy.headers["x-request-id"]).toBe("nginx-5f2a");
    const fromRange = await gw.app.inject({ method: "GET", url: "/healthz", remoteAddress: "10.20.30.40", headers: { "x-request-id": "nginx-77b1" } });
    expect(fromRange.headers["x-request-id"]).toBe("nginx-77b1");
    expect(gw.logText()).toContain('"reqId":"nginx-5f2a"');
  });

  it("is taken over a real connection when the proxy's range covers it (loopback), and from every peer with true", async () => {
    const loopback = await gateway(["loopback"]);
    expect(await idOverSocket(loopback.baseUrl, "nginx-loop-1")).toBe("nginx-loop-1");
    const everyone = await gateway(true);
    const anyPeer = await everyone.app.inject({ method: "GET", url: "/healthz", remoteAddress: "203.0.113.99", headers: { "x-request-id": "edge-42" } });
    expect(anyPeer.headers["x-request-id"]).toBe("edge-42");
  });

  it("is never taken without trusted proxies, and a malformed one is replaced even from a trusted proxy", async () => {
    const untrusting = await gateway();
    expect(await idOverSocket(untrusting.baseUrl, "chosen-by-client")).toMatch(FRESH);
    const trusting = await gateway(["loopback"]);
    expect(await idOverSocket(trusting.baseUrl, "has spaces and ; semicolons")).toMatch(FRESH);
  });
});
