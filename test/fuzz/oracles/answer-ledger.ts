import { idKey, type Expectation } from "./expectation.js";

/**
 * What one case received, checked against what it was owed: every message must be valid in the
 * dialect (a response against the method of the request it answers), every owed id answered as
 * many times as it was sent, no answer to anything never asked, null-id answers within bounds.
 */

export interface DialectAnswers {
  /** The id and error code of a response; undefined for any other message (notification, delta…). */
  response(message: unknown): { id: unknown; errorCode?: string } | undefined;
  /** Problems of one message (empty when valid); `respondsTo` is the method of the request it answers, when known. */
  check(message: unknown, respondsTo: string | undefined): string[];
}

export class AnswerLedger {
  private readonly answered = new Map<string, number>();
  private nulls = 0;
  readonly problems: string[] = [];
  /** Responses received, and error responses by code (for the summary). */
  responses = 0;
  readonly errorCodes = new Map<string, number>();
  /** The first error response of each code, as text. */
  readonly errorSamples = new Map<string, string>();

  constructor(
    private readonly expectation: Expectation,
    private readonly dialect: DialectAnswers,
    /** Ids of the runner's own requests (e.g. a sentinel): answered, but not part of the case. */
    private readonly ownIds: ReadonlySet<string> = new Set(),
  ) {}

  receive(message: unknown): void {
    const response = this.dialect.response(message);
    if (!response) {
      this.problems.push(...this.dialect.check(message, undefined));
      return;
    }
    const key = idKey(response.id);
    if (this.ownIds.has(key)) return;
    this.responses++;
    if (response.errorCode !== undefined) {
      this.errorCodes.set(response.errorCode, (this.errorCodes.get(response.errorCode) ?? 0) + 1);
      if (!this.errorSamples.has(response.errorCode)) this.errorSamples.set(response.errorCode, JSON.stringify(message));
    }
    const owed = response.id === null ? undefined : this.expectation.owed.get(key);
    const methods = owed ? [...new Set(owed.methods)] : [];
    // Several requests with one id and different methods: only the envelope can be checked.
    this.problems.push(...this.dialect.check(message, methods.length === 1 ? methods[0] : undefined));
    if (response.id === null) {
      this.nulls++;
      return;
    }
    this.answered.set(key, (this.answered.get(key) ?? 0) + 1);
    if (!owed) this.problems.push(`an answer with id ${key} that no request of this case carried`);
  }

  /** Everything definitely owed has arrived. */
  complete(): boolean {
    for (const [key, owed] of this.expectation.owed) if ((this.answered.get(key) ?? 0) < owed.min) return false;
    return this.nulls >= this.expectation.nullsAtLeast;
  }

  /** Every problem: invalid messages, and answers missing, repeated or unasked for. */
  verdict(): string[] {
    const problems = [...this.problems];
    for (const [key, owed] of this.expectation.owed) {
      const got = this.answered.get(key) ?? 0;
      if (got < owed.min) problems.push(`request id ${key} (${owed.methods.join(", ") || "no method"}): ${got} answer(s), expected ${owed.min === owed.max ? owed.min : `${owed.min}–${owed.max}`}`);
      else if (got > owed.max) problems.push(`request id ${key} (${owed.methods.join(", ") || "no method"}): ${got} answers, expected at most ${owed.max}`);
    }
    const { nullsAtLeast, nullsAtMost } = this.expectation;
    if (this.nulls < nullsAtLeast || this.nulls > nullsAtMost) {
      problems.push(`${this.nulls} answer(s) with a null id, expected ${nullsAtLeast === nullsAtMost ? nullsAtLeast : `${nullsAtLeast}–${nullsAtMost}`}`);
    }
    return problems;
  }
}
