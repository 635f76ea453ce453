/**
 * A message written unchanged to many connections (a `session/event` goes to every subscriber of
 * its session): its text, and its UTF-8 bytes made once, when a transport that writes bytes first
 * asks for them. A WebSocket sends the same buffer to every subscriber instead of encoding the
 * text again for each.
 */
export class SharedText {
  private encoded: Buffer | undefined;

  constructor(readonly text: string) {}

  get bytes(): Buffer {
    return (this.encoded ??= Buffer.from(this.text, "utf8"));
  }
}

/** What a connection writes: its own text (a response, a reverse request) or a shared message. */
export type OutgoingText = string | SharedText;

export function textOf(message: OutgoingText): string {
  return typeof message === "string" ? message : message.text;
}
