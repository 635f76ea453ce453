import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { lazySchemaCompilers } from "../../src/gateway/schema-compilers.js";

/** The gateway's app loads fastify's route-schema compilers only when a route declares a schema; they must still work then. */
describe("fastify's schema compilers, loaded on first use", () => {
  it("validate a route's body and serialize its response as fastify's defaults do", async () => {
    const app = Fastify({ schemaController: { compilersFactory: lazySchemaCompilers } });
    app.post(
      "/echo",
      {
        schema: {
          body: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
          response: { 200: { type: "object", properties: { n: { type: "integer" } } } },
        },
      },
      async (request) => ({ n: (request.body as { n: number }).n, dropped: "not in the response schema" }),
    );
    try {
      const ok = await app.inject({ method: "POST", url: "/echo", payload: { n: 3 } });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toEqual({ n: 3 });
      const bad = await app.inject({ method: "POST", url: "/echo", payload: { n: "three" } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toContain("body/n must be integer");
    } finally {
      await app.close();
    }
  });
});
