import WebSocket from "ws";
import type { LineLog } from "../shared/log.js";
import type { TauCodec } from "../tau/codec.js";
import { formatIssue } from "../validation/issues.js";

/** An outgoing message failed the schema: a host bug, reported as loudly as possible. */
export class OutgoingMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutgoingMessageError";
  }
}

export interface OutgoingOptions {
  codec: TauCodec;
  validate: boolean;
  log: LineLog;
}

/**
 * Sends one server message on a socket. In development mode the message is first checked against
 * the schema (`respondsTo` = the method a response answers); an invalid one is logged, printed,
 * closes the connection with 1011 and throws — never sent.
 */
export function sendMessage(socket: WebSocket, message: object, options: OutgoingOptions, respondsTo?: string): void {
  if (socket.readyState !== WebSocket.OPEN) return;
  if (options.validate) {
    const verdict = options.codec.checkServerMessage(message as Record<string, unknown>, respondsTo);
    if (!verdict.ok) {
      const what = verdict.subject ?? (message as { type?: string }).type ?? "message";
      const line = `tau host sent an invalid ${what}: ${verdict.issues.map(formatIssue).join("; ")}`;
      options.log(line);
      console.error(line);
      socket.close(1011, "session protocol send failed");
      throw new OutgoingMessageError(line);
    }
  }
  try {
    socket.send(JSON.stringify(message));
  } catch (err) {
    options.log(`send failed: ${(err as Error).message}`);
    socket.close(1011, "session protocol send failed");
  }
}
