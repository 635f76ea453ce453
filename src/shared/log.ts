/**
 * How components log, below every layer so each one can take a log without depending on another
 * layer or on a logging library. The gateway backs `Log` with pino; by default nothing is written.
 */

export type LogLevel = "debug" | "info" | "warn" | "error";

/** A structured log line: a level, a message and optional fields. */
export type Log = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

/** A plain-text diagnostics line, as the embedded Tau host writes them. */
export type LineLog = (line: string) => void;
