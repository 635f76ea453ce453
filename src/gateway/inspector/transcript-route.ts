import type { FastifyError, FastifyPluginAsync } from "fastify";
import type { Dialect } from "../../registry/index.js";
import { ProtocolValidators } from "../../validation/validator.js";
import { nonUtf8Charset, UnsupportedCharset } from "../json-charset.js";
import { DEFAULT_TRANSCRIPT_CHECK_MS, TranscriptChecks } from "./transcript-check.js";

/**
 * `POST /inspector/api/transcript`: a JSONL transcript or recording in the body (what the page
 * sends when one is dropped on it), answered with the verdict on each line from the validators
 * `tau-gateway validate` runs, as the page's frame rows. Registered inside the inspector's own
 * scope, so it passes the same checks as its other data routes (Host, Origin, token). Nothing is
 * kept. A body over the limit gets 413, another media type or charset 415, an unknown `dialect`
 * 400, each with `{error, message}`; lines that are wrong are verdicts, one per line, not errors.
 * The check runs in a worker thread (transcript-check.ts), never on the gateway's event loop: one
 * that takes longer than `checkTimeoutMs` gets 422, and one more than the worker has room to queue 503.
 */

export interface TranscriptRouteOptions {
  /** Largest transcript accepted, in bytes. */
  maxBytes: number;
  /** Longest a check may take (default DEFAULT_TRANSCRIPT_CHECK_MS). */
  checkTimeoutMs?: number;
}

/** 8 MiB: a long session's recording; beyond it, `tau-gateway validate` reads files of any size. */
export const DEFAULT_MAX_TRANSCRIPT_BYTES = 8 * 1024 * 1024;

const MEDIA_TYPES = ["application/x-ndjson", "application/jsonl", "application/json", "text/plain"];

export const transcriptRoute: FastifyPluginAsync<TranscriptRouteOptions> = async (app, { maxBytes, checkTimeoutMs }) => {
  const checks = new TranscriptChecks(checkTimeoutMs ?? DEFAULT_TRANSCRIPT_CHECK_MS);
  app.addHook("onClose", () => checks.close());
  // The transcript is read line by line as text (a JSON body is no exception), in the worker: here
  // it is kept as the bytes that came, which are moved to the worker without being decoded.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(MEDIA_TYPES, { parseAs: "buffer", bodyLimit: maxBytes }, (request, body, done) => {
    const charset = nonUtf8Charset(request.headers["content-type"]);
    done(charset === undefined ? null : new UnsupportedCharset(charset), charset === undefined ? body : undefined);
  });

  app.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      return reply.code(413).send({ error: "transcript_too_large", message: `a transcript checked here may be at most ${maxBytes} bytes; run tau-gateway validate on larger files` });
    }
    if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE" || error instanceof UnsupportedCharset) return reply.code(415).send(unsupportedMediaType());
    return reply.send(error);
  });

  app.post<{ Querystring: { dialect?: string } }>("/inspector/api/transcript", { bodyLimit: maxBytes, config: { checksOwnOrigin: true, checksOwnHost: true } }, async (request, reply) => {
    // A POST without a body (and so without a content type) never reaches the parser.
    if (!Buffer.isBuffer(request.body)) return reply.code(415).send(unsupportedMediaType());
    const dialect = request.query.dialect;
    const dialects = ProtocolValidators.shared().dialects;
    if (dialect !== undefined && dialect !== "" && !dialects.includes(dialect as Dialect)) {
      return reply.code(400).send({ error: "bad_dialect", message: `dialect must be one of ${dialects.join(", ")} (got ${JSON.stringify(dialect)})` });
    }
    const outcome = await checks.check(request.body, dialect ? (dialect as Dialect) : undefined);
    if (outcome.ok) return reply.type("application/json; charset=utf-8").send(outcome.json);
    if (outcome.reason === "busy") return reply.code(503).header("retry-after", "5").send({ error: "transcript_checks_busy", message: outcome.message });
    return reply.code(422).send({ error: outcome.reason === "timeout" ? "transcript_check_timeout" : "transcript_check_failed", message: outcome.message });
  });
};

const unsupportedMediaType = () => ({
  error: "unsupported_media_type",
  message: `send the transcript as UTF-8 text, with Content-Type ${MEDIA_TYPES.join(", ")}`,
});
