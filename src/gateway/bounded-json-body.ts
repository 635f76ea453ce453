import type { FastifyInstance } from "fastify";
import { readBoundedJsonText } from "./json-body-reader.js";

/**
 * The JSON body parser of every route that takes Fastify's default one (the inspector's answers,
 * for instance), in place of it: the body's shape is bounded as it is read, before it is parsed
 * (json-body-reader.ts), so no body holds the event loop. A body past the bounds is answered 400
 * naming the bound; Fastify's own protection against `__proto__` and `constructor` keys is kept
 * (they are refused). Routes with a parser of their own (`POST /rpc`) read their bodies the same way.
 */
export function useBoundedJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", (request, payload, done) => {
    readBoundedJsonText(request, payload, (error, text) => {
      if (error) return done(error, undefined);
      if (text!.trim() === "") return done(Object.assign(new Error("Body cannot be empty when content-type is set to 'application/json'"), { statusCode: 400 }), undefined);
      try {
        const value: unknown = JSON.parse(text!);
        if (/"(?:__proto__|constructor)"\s*:/.test(text!)) return done(Object.assign(new Error("Object contains forbidden prototype property"), { statusCode: 400 }), undefined);
        done(null, value);
      } catch (error) {
        done(Object.assign(new Error(`body is not JSON: ${(error as Error).message}`), { statusCode: 400 }), undefined);
      }
    });
  });
}
