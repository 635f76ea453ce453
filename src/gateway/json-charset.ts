import { MIMEType } from "node:util";
import type { FastifyInstance } from "fastify";
import { readBoundedJsonText } from "./json-body-reader.js";

/**
 * The charset a JSON request declares when it is not UTF-8; undefined when it declares UTF-8 or
 * none. JSON between systems is UTF-8 (RFC 8259 §8.1) and bodies are decoded as UTF-8, so a body
 * declared in another charset would be misread: it is refused instead. The header is parsed as a
 * media type (parameter names case-insensitive, quotes removed) and the label resolved as the
 * Encoding Standard does, so `UTF-8`, `"utf-8"` and `utf8` all name UTF-8; an unknown label is
 * not UTF-8.
 */
export function nonUtf8Charset(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  let label: string | null;
  try {
    label = new MIMEType(contentType).params.get("charset");
  } catch {
    // Not a media type at all: the content-type parser lookup has already judged the header.
    return undefined;
  }
  if (label === null) return undefined;
  try {
    return new TextDecoder(label).encoding === "utf-8" ? undefined : label;
  } catch {
    return label;
  }
}

/** A body declared in a charset other than UTF-8 (answered with 415). */
export class UnsupportedCharset extends Error {
  constructor(readonly charset: string) {
    super(`unsupported charset ${charset}`);
  }
}

/**
 * Has the scope read JSON bodies as text, up to `bodyLimit` bytes: the JSON-RPC layer parses them
 * itself, so a malformed body is a JSON-RPC parse error (-32700) as on every other transport, not
 * a Fastify 400. A body declared in another charset fails with UnsupportedCharset, before it is
 * read; one past the shape bounds fails with JsonBodyRefused as soon as the chunk that passes
 * them arrives (json-body-reader.ts), so the route answers it in its dialect.
 */
export function readJsonBodiesAsText(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { bodyLimit }, (request, payload, done) => {
    const charset = nonUtf8Charset(request.headers["content-type"]);
    if (charset !== undefined) return done(new UnsupportedCharset(charset), undefined);
    readBoundedJsonText(request, payload, done);
  });
}
