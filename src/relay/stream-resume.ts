type Message = Record<string, unknown>;

/**
 * What a relay resumes on a new link to the gateway besides the client's handshake: the streams
 * the client had opened, continued from where the relay left off. It watches the client's requests
 * as they are answered and the notifications it forwards, and says which requests to repeat.
 */
export interface StreamResume {
  /** A client request was answered with a result. */
  answered(method: string, params: unknown, result: unknown): void;
  /** The gateway sent this notification and the relay forwarded it to the client. */
  forwarded(method: string, params: unknown): void;
  /**
   * Looks, before `replays`, at what the new link's gateway still has of the client's streams:
   * `request` asks it (the answer kept from the client), `tell` writes a message to the client.
   * Resolves with the answers, which the relay checks as it checks the replays' answers.
   */
  prepare?(request: (method: string, params: Record<string, unknown>) => Promise<Message>, tell: (message: Message) => void): Promise<Message[]>;
  /** The client's request as the gateway must read it; undefined: as it is. */
  toGateway?(message: Message): Message | undefined;
  /** The gateway's message as the client must read it (`answering`: the method of the client's request it answers); undefined: as it is. */
  toClient?(message: Message, answering?: string): Message | undefined;
  /** The requests that reopen the streams on a new link, sent (and their answers kept from the client) after the handshake. */
  replays(): Array<{ method: string; params: Record<string, unknown> }>;
  /**
   * The gateway refused one of those requests (the session is gone: it ended with an embedded
   * host, or was closed): it is not repeated on later links, and the client learns of it from the
   * gateway's not-found answer to its next request there.
   */
  refused?(params: Record<string, unknown>): void;
}

/** A [seq, index] the gateway sent, if one. */
export const positionIn = (at: unknown): [seq: number, index: number] | undefined => (Array.isArray(at) && at.length === 2 && at.every(Number.isSafeInteger) ? [at[0], at[1]] : undefined);

/** Whether `a` comes before `b` (nothing comes before an unknown place). */
export const before = (a: [seq: number, index: number], b: [seq: number, index: number] | undefined): boolean => b !== undefined && (a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]));
