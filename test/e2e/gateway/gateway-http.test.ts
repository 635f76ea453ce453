import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { schemaDir } from "../../../src/validation/schema-files.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startFakeTauPeer } from "../../support/fake-tau-peer.js";
import { gatewayInFrontOf } from "../../support/gateway.js";
import { startHostClosedAfterTest } from "../../support/tau-client.js";

/** The gateway's plain HTTP routes, through Fastify's inject() against a real upstream connection. */

const cleanups = cleanupsAfterEach();

const host = () => startHostClosedAfterTest(cleanups);

const gatewayFor = (url: string) => gatewayInFrontOf(url, cleanups);

describe("health", () => {
  it("GET /healthz is 200 ok whatever the upstream does", async () => {
    const { app } = gatewayFor("ws://127.0.0.1:9");
    const response = await app.inject({ method: "GET", url: "/healthz" });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: "ok" });
  });

  it("GET /readyz is 200 while the upstream is connected and 503 with a reason once it is gone", async () => {
    const h = await host();
    const { app, upstream } = gatewayFor(h.url);
    const before = await app.inject({ method: "GET", url: "/readyz" });
    expect(before.statusCode).toBe(503);
    expect(before.json()).toMatchObject({ status: "unavailable", reason: expect.stringMatching(/not started/) });

    await upstream.start();
    const ready = await app.inject({ method: "GET", url: "/readyz" });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: "ready", upstream: { connected: true, protocolVersion: 18 } });

    const gone = new Promise<void>((resolve) => upstream.onDisconnected(() => resolve()));
    await h.close();
    await gone;
    const after = await app.inject({ method: "GET", url: "/readyz" });
    expect(after.statusCode).toBe(503);
    expect(after.json()).toMatchObject({ status: "unavailable", reason: expect.stringMatching(/closed/) });
  });

  it("GET /readyz is 503 naming the version when the upstream speaks another protocol version", async () => {
    const v17 = await startFakeTauPeer({ ready: { version: 17, type: "ready", methods: ["initialize"] } });
    cleanups.push(() => v17.close());
    const { app, upstream } = gatewayFor(v17.url);
    await expect(upstream.start()).rejects.toThrow(/version 17/);
    const response = await app.inject({ method: "GET", url: "/readyz" });
    expect(response.statusCode).toBe(503);
    expect(response.json().reason).toMatch(/version 17/);
  });
});

describe("schema", () => {
  const dir = schemaDir();
  const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as { bundles: Array<{ schema: string }> };

  it("GET /schema is schema/index.json", async () => {
    const { app } = gatewayFor("ws://127.0.0.1:9");
    const response = await app.inject({ method: "GET", url: "/schema" });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(response.json()).toEqual(index);
  });

  it("GET /schema/<file> serves every file the index lists, byte for byte", async () => {
    const { app } = gatewayFor("ws://127.0.0.1:9");
    expect(index.bundles.length).toBeGreaterThan(0);
    for (const { schema } of index.bundles) {
      const response = await app.inject({ method: "GET", url: `/schema/${schema}` });
      expect(response.statusCode, schema).toBe(200);
      expect(response.body).toBe(readFileSync(join(dir, schema), "utf8"));
    }
  });

  it("answers 404 for files the index does not list and for path traversal", async () => {
    const { app } = gatewayFor("ws://127.0.0.1:9");
    for (const url of [
      "/schema/nope.json",
      "/schema/..%2Fpackage.json",
      "/schema/%2e%2e%2fpackage.json",
      "/schema/../package.json",
      "/schema/..%2F..%2Fetc%2Fpasswd",
      "/schema/tau-v18.schema.json%00",
      "/schema/sub/tau-v18.schema.json",
    ]) {
      const response = await app.inject({ method: "GET", url });
      expect(response.statusCode, url).toBe(404);
      expect(response.body, url).not.toContain("tau-gateway\",");
    }
  });
});
