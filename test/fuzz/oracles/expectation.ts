/**
 * What the gateway owes a client for what it sent: one answer per request id (as many as were
 * sent with that id), and a number of answers with a null id (for messages whose id could not be
 * read) within bounds. Dialect oracles fill it in; the ledger checks what arrived against it.
 */

export interface OwedAnswers {
  id: unknown;
  /** Answers with this id: at least `min`, at most `max`. */
  min: number;
  max: number;
  /** Methods of the requests sent with this id (to check a success result against its method). */
  methods: Array<string | undefined>;
}

export class Expectation {
  readonly owed = new Map<string, OwedAnswers>();
  nullsAtLeast = 0;
  nullsAtMost = 0;
  /** Messages and batch elements sent (the "requests" of the summary). */
  sent = 0;
  /**
   * The connection is expected to close (with this code) after what was sent; answers to what
   * went before may then be lost with it, so they become "at most" rather than "exactly".
   */
  closeCode: number | undefined;

  /** One answer with this id is owed (`definitely`), or allowed. */
  owe(id: unknown, method: string | undefined, definitely = true): void {
    const key = idKey(id);
    const entry = this.owed.get(key) ?? { id, min: 0, max: 0, methods: [] };
    if (definitely) entry.min++;
    entry.max++;
    entry.methods.push(method);
    this.owed.set(key, entry);
  }

  /** An answer with a null id: `definitely` owed, or allowed. */
  oweNull(definitely: boolean): void {
    if (definitely) this.nullsAtLeast++;
    this.nullsAtMost++;
  }
}

/** Ids compared as JSON: 1 and "1" differ, 1 and 1.0 do not. */
export const idKey = (id: unknown): string => JSON.stringify(id) ?? "undefined";
