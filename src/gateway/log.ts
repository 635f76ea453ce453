import type { FastifyBaseLogger } from "fastify";
import type { UpstreamLog } from "../tau/upstream.js";

/** Adapts a pino logger to the `(level, message, fields)` shape the protocol layers log through. */
export function pinoLog(logger: FastifyBaseLogger): UpstreamLog {
  return (level, message, fields) => (fields ? logger[level](fields, message) : logger[level](message));
}
