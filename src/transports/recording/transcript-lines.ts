import type { Dialect } from "../../registry/index.js";
/**
 * The lines of a recorded transcript, in the form `tau-gateway validate` reads: a header naming
 * the dialect, then one line per message, `{"direction":"client"|"server","message":{…},"time":…}`.
 * A batch is recorded element by element (validate checks messages, not batches); text that is
 * not JSON is kept as it came, under `text`, so validate reports it for what it is.
 */

/** A recording's dialect: any of the registry's. */
export type RecordedDialect = Dialect;

/** The first line of a recording: validate takes the file's dialect from it. */
export function headerLine(header: { dialect: RecordedDialect; connection: string; transport: string; started: Date }): string {
  return `${JSON.stringify({ recording: { format: 1, dialect: header.dialect, connection: header.connection, transport: header.transport, started: header.started.toISOString() } })}\n`;
}

/** The lines of one message as it crossed the wire. */
export function messageLines(direction: "client" | "server", text: string, at: Date): string {
  const time = at.toISOString();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `${JSON.stringify({ direction, time, text })}\n`;
  }
  if (Array.isArray(value) && value.length > 0) {
    return value.map((message) => `${JSON.stringify({ direction, time, batch: true, message })}\n`).join("");
  }
  return `${JSON.stringify({ direction, time, message: value })}\n`;
}
