/**
 * Redis keys of one Tau host's interactions. Every key carries the host in a hash tag, so all of a
 * host's interactions (and its answer stream) live in one slot: each script touches one slot only.
 */
export class InteractionKeys {
  private readonly base: string;

  constructor(prefix: string, hostKey: string) {
    this.base = `${prefix}{${hostKey}}:`;
  }

  /** HASH interaction id → SharedInteraction JSON: a session's pending interactions. */
  pending(sessionId: string): string {
    return `${this.base}interactions:${sessionId}`;
  }

  /** ZSET interaction id by creation ordinal: the listing order. */
  order(sessionId: string): string {
    return `${this.base}interaction-order:${sessionId}`;
  }

  /** HASH kind → highest number used in the session. */
  numbers(sessionId: string): string {
    return `${this.base}interaction-numbers:${sessionId}`;
  }

  /** STRING counter giving the creation ordinals. */
  get ordinal(): string {
    return `${this.base}interaction-ordinal`;
  }

  /** ZSET `sessionId interactionId` by deadline (ms): what to sweep when the replica that opened it is gone. */
  get deadlines(): string {
    return `${this.base}interaction-deadlines`;
  }

  /** STREAM of accepted answers, read by the host's owner through a consumer group. */
  get answers(): string {
    return `${this.base}interaction-answers`;
  }
}

/** The member of the deadlines set naming one interaction. */
export const deadlineMember = (sessionId: string, interactionId: string): string => `${sessionId} ${interactionId}`;
