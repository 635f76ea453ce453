import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import type { SchemaIndex } from "../../registry/schema-index.js";
import { schemaDir } from "../../validation/schema-files.js";

/**
 * The committed JSON Schema, for client CI: `GET /schema` is schema/index.json, `GET /schema/<file>`
 * one of the files the index lists (and the index itself). The file name is looked up in that
 * list, never joined onto a path from the request, so nothing else on disk is reachable.
 */
const schema: FastifyPluginAsync = async (app) => {
  const dir = schemaDir();
  const indexText = readFileSync(join(dir, "index.json"), "utf8");
  const index = JSON.parse(indexText) as SchemaIndex;
  const files = new Map<string, string>([["index.json", indexText]]);
  for (const bundle of index.bundles) files.set(bundle.schema, readFileSync(join(dir, bundle.schema), "utf8"));

  app.get("/schema", async (_request, reply) => reply.type("application/json; charset=utf-8").send(indexText));

  app.get<{ Params: { file: string } }>("/schema/:file", async (request, reply) => {
    const text = files.get(request.params.file);
    if (text === undefined) {
      reply.code(404);
      return { error: "not_found", message: `no schema file ${JSON.stringify(request.params.file)}; see GET /schema for the list` };
    }
    return reply.type("application/json; charset=utf-8").send(text);
  });
};

export const schemaRoutes = fp(schema, { name: "tau-gateway-route-schema", fastify: "5.x", encapsulate: true });
