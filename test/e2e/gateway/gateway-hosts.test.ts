import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { allowedHostNames } from "../../../src/gateway/auth/hosts.js";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { runCommand } from "../../support/cli.js";
import { startOperatedGateway, type OperatedGatewayOptions } from "../../support/operated-gateway.js";

/**
 * The Host check of a gateway without tokens, over real HTTP: a page of another site whose name
 * was made to resolve to the gateway (DNS rebinding) reads it as its own origin, with no Origin
 * header on its GETs — but its requests name its own host. Those are refused on every client
 * route (metrics, a session's event stream, the WebSocket upgrades), while the loopback names,
 * any IP address, the names of --allowed-hosts and the health checks pass; with tokens, the token
 * decides and any name passes.
 */

const cleanups = cleanupsAfterEach();
const gateway = (options: OperatedGatewayOptions = {}) => cleanups.stopAfterTest(startOperatedGateway(options));
const REBOUND = "attacker.example";

/** A GET naming `host` in its Host header (fetch will not set one), answered with its status and JSON body. */
function get(httpUrl: string, path: string, host: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const { port } = new URL(httpUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${httpUrl}${path}`, { headers: { host: `${host}:${port}`, connection: "close", ...headers } }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      // An event stream that was let in never ends by itself: its head is the answer.
      if (response.headers["content-type"]?.startsWith("text/event-stream")) {
        resolve({ status: response.statusCode ?? 0, body: "" });
        return void req.destroy();
      }
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The status a WebSocket upgrade naming `host` is answered with (101 when it opened). */
function upgrade(rpcUrl: string, host: string, headers: Record<string, string> = {}): Promise<number> {
  const { port } = new URL(rpcUrl);
  return new Promise((resolve) => {
    const socket = new WebSocket(rpcUrl, { headers: { host: `${host}:${port}`, ...headers } });
    socket.once("unexpected-response", (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.once("open", () => {
      resolve(101);
      socket.terminate();
    });
    socket.on("error", () => undefined);
  });
}

describe("Host check without tokens", () => {
  it("refuses a request naming another site's host on /metrics, /schema, /rpc/events and the WebSocket routes, and says why", async () => {
    const gw = await gateway();
    const client = await gw.askClient();
    const { session } = await client.request("session/create", {});

    const metrics = await get(gw.httpUrl, "/metrics", REBOUND);
    expect(metrics.status).toBe(403);
    expect(JSON.parse(metrics.body)).toEqual({ error: "forbidden_host", message: expect.stringContaining("--allowed-hosts") });
    expect((await get(gw.httpUrl, `/rpc/events?sessionId=${session.sessionId}`, REBOUND)).status).toBe(403);
    expect((await get(gw.httpUrl, "/schema", REBOUND)).status).toBe(403);
    expect(await upgrade(gw.rpcUrl, REBOUND)).toBe(403);
    expect(await upgrade(gw.tauUrl, REBOUND)).toBe(403);

    // The gateway's own names pass: the loopback names, and any address written out.
    for (const host of ["127.0.0.1", "localhost", "[::1]", "192.0.2.7"]) expect((await get(gw.httpUrl, "/metrics", host)).status).toBe(200);
    expect((await get(gw.httpUrl, `/rpc/events?sessionId=${session.sessionId}`, "localhost")).status).toBe(200);
    expect(await upgrade(gw.rpcUrl, "localhost")).toBe(101);
    // Probes are answered whatever they name (an orchestrator probes by pod name or address).
    expect((await get(gw.httpUrl, "/healthz", REBOUND)).status).toBe(200);
  });

  it("serves the names --allowed-hosts adds, and every name with *", async () => {
    const named = await gateway({ allowedHosts: allowedHostNames("127.0.0.1", ["gateway.internal"]) });
    expect((await get(named.httpUrl, "/metrics", "gateway.internal")).status).toBe(200);
    expect((await get(named.httpUrl, "/metrics", REBOUND)).status).toBe(403);
    const any = await gateway({ allowedHosts: "*" });
    expect((await get(any.httpUrl, "/metrics", REBOUND)).status).toBe(200);
  });

  it("leaves the Host to the token when the gateway has tokens", async () => {
    const gw = await gateway({ tokens: TokenRegistry.single("tok-hosts-1") });
    expect((await get(gw.httpUrl, "/metrics", REBOUND)).status).toBe(401);
    expect((await get(gw.httpUrl, "/metrics", REBOUND, { authorization: "Bearer tok-hosts-1" })).status).toBe(200);
  });

  it("lists --allowed-hosts in serve --help and refuses a value that is not a host name", async () => {
    const { stdout } = await runCommand(["serve", "--help"]);
    expect(stdout).toContain("--allowed-hosts");
    expect(stdout).toContain("TAU_GATEWAY_ALLOWED_HOSTS");
    const bad = await runCommand(["serve"], { env: { TAU_GATEWAY_ALLOWED_HOSTS: "http://x.example" } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("TAU_GATEWAY_ALLOWED_HOSTS");
  });
});
