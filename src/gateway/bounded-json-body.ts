import type { FastifyInstance } from "fastify";
import { JsonBoundsError, parseBoundedJson } from "../shared/json-bounds.js";

/**
 * The JSON body parser of every route that takes Fastify's default one (the inspector's answers,
 * for instance), in place of it: the body's shape is bounded before it is parsed (json-bounds.ts),
 * so no body holds the event loop. A body past the bounds is answered 400 naming the bound;
 * Fastify's own protection against `__proto__` and `constructor` keys is kept (they are refused).
 * Routes with a parser of their own (`POST /rpc`) bound their bodies themselves.
 */
export function useBoundedJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === "") return done(Object.assign(new Error("Body cannot be empty when content-type is set to 'application/json'"), { statusCode: 400 }), undefined);
    try {
      const value = parseBoundedJson(text);
      if (/"(?:__proto__|constructor)"\s*:/.test(text)) return done(Object.assign(new Error("Object contains forbidden prototype property"), { statusCode: 400 }), undefined);
      done(null, value);
    } catch (error) {
      const words = error instanceof JsonBoundsError ? `body refused: ${error.message}` : `body is not JSON: ${(error as Error).message}`;
      done(Object.assign(new Error(words), { statusCode: 400 }), undefined);
    }
  });
}
