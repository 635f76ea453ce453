import type { FastifyBaseLogger } from "fastify";
import type { Log } from "../shared/log.js";

/** Adapts a pino logger to the `(level, message, fields)` shape the protocol layers log through. */
export function pinoLog(logger: FastifyBaseLogger): Log {
  return (level, message, fields) => (fields ? logger[level](fields, message) : logger[level](message));
}
