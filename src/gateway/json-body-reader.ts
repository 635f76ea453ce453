import type { Readable } from "node:stream";
import { errorCodes, type FastifyReply, type FastifyRequest } from "fastify";
import { JsonBoundsScan, topLevelId, type JsonBoundsError } from "../shared/json-bounds.js";

/**
 * A JSON body refused for its shape while it was read (400 unless the route answers it in its
 * dialect): `refused` says which bound, `id` is the top-level id read from the body up to where it
 * passed the bound, when one was there (so a JSON-RPC refusal can answer that request).
 */
export class JsonBodyRefused extends Error {
  readonly statusCode = 400;
  constructor(
    readonly refused: JsonBoundsError,
    readonly id: string | number | undefined,
  ) {
    super(`body refused: ${refused.message}`);
    this.name = "JsonBodyRefused";
  }
}

type Done = (error: Error | null, body?: string) => void;

/**
 * Reads a JSON body as UTF-8 text, as Fastify's own `parseAs: "string"` does (the route's body
 * limit, 413 past it; a length other than the declared one refused), with the shape bounds of
 * json-bounds.ts checked on each chunk as it arrives instead of on the joined text: a body nested
 * too deep or with too many values is refused (JsonBodyRefused) at the chunk that passes the
 * bound, and answered then. The rest is read and dropped, neither kept nor scanned, up to the
 * body limit (past it the connection is destroyed), so a route that keeps the connection open
 * (keepsConnectionOpen) delivers its answer whole instead of losing it to a reset while the
 * client is still sending. Joining and decoding a 32 MiB body cost its whole length; the refusal
 * costs what was read before the bound.
 */
export function readBoundedJsonText(request: FastifyRequest, payload: Readable, done: Done): void {
  const limit = request.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY;
  const declared = Number(request.headers["content-length"]);
  if (declared > limit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
  const scan = new JsonBoundsScan();
  const chunks: Buffer[] = [];
  let received = 0;

  const finish = (error: Error | null, body?: string) => {
    payload.removeListener("data", onData);
    payload.removeListener("end", onEnd);
    payload.removeListener("error", onError);
    if (error instanceof JsonBodyRefused) payload.on("data", drop);
    done(error, body);
  };
  const drop = (data: Buffer | string) => {
    received += data.length;
    if (received > limit) payload.destroy();
  };
  const onData = (data: Buffer | string) => {
    const chunk = typeof data === "string" ? Buffer.from(data) : data;
    received += chunk.length;
    if (received > limit) return finish(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    // As latin1, one character per byte: the scan looks only at ASCII, which UTF-8 never uses inside a character.
    const refused = scan.feed(chunk.toString("latin1"));
    if (refused) {
      const read = Buffer.concat([...chunks, chunk.subarray(0, scan.refusedAt + 1)]).toString("utf8");
      return finish(new JsonBodyRefused(refused, topLevelId(read)));
    }
    chunks.push(chunk);
  };
  const onEnd = () => {
    if (!Number.isNaN(declared) && received !== declared) return finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    finish(null, Buffer.concat(chunks, received).toString("utf8"));
  };
  const onError = (error: Error & { statusCode?: number }) => {
    if (!(typeof error.statusCode === "number" && error.statusCode >= 400)) error.statusCode = 400;
    finish(error);
  };
  payload.on("data", onData);
  payload.on("end", onEnd);
  payload.on("error", onError);
  payload.resume();
}

/**
 * For a route's error handler answering a JsonBodyRefused: Fastify closes the connection after any
 * body parser's error, since the client may still be sending; the rest of a refused body is read
 * and dropped (readBoundedJsonText), so the connection can stay, and the answer is not lost to the
 * reset a close causes while the client writes.
 */
export function keepsConnectionOpen(reply: FastifyReply): void {
  reply.removeHeader("connection");
}
