import { createRequire } from "node:module";
import type { FastifyServerOptions } from "fastify";

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]>;
type ValidatorFactory = NonNullable<CompilersFactory["buildValidator"]>;
type SerializerFactory = NonNullable<CompilersFactory["buildSerializer"]>;

/**
 * Fastify's own route-schema compilers (@fastify/ajv-compiler, @fastify/fast-json-stringify-compiler),
 * loaded the first time a route declares a schema. Fastify loads both, with their own ajv and
 * formats, whenever an app is made: about 50 ms of start-up, and no route of the gateway declares
 * a schema (messages are checked against the protocol registry, src/validation). They are the
 * defaults fastify would use, required from where fastify requires them.
 *
 * One difference a future route would see: fastify treats compilers given here as custom ones and
 * compiles a `headers` schema as written, without lowercasing its property names first.
 */
const requireAsFastify = createRequire(createRequire(import.meta.url).resolve("fastify"));

let validatorFactory: ValidatorFactory | undefined;
let serializerFactory: SerializerFactory | undefined;

export const lazySchemaCompilers: CompilersFactory = {
  buildValidator: (externalSchemas, options) => {
    validatorFactory ??= (requireAsFastify("@fastify/ajv-compiler") as () => ValidatorFactory)();
    return validatorFactory(externalSchemas, options);
  },
  buildSerializer: (externalSchemas, options) => {
    serializerFactory ??= (requireAsFastify("@fastify/fast-json-stringify-compiler") as () => SerializerFactory)();
    return serializerFactory(externalSchemas, options);
  },
};
