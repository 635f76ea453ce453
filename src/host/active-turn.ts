import type { TurnOutcome } from "../../generated/tau-v18.js";
import type { ProtocolError } from "./protocol-error.js";

/** Who waits for a turn: each resolves with the outcome (or rejects when the turn cannot run). */
export interface TurnWaiter {
  resolve(outcome: TurnOutcome): void;
  reject(error: ProtocolError): void;
}

/** A user turn carries the history entry it created; a retry runs from history without one. */
export type TurnRequest =
  | { kind: "user"; entryId: string; text: string; waiters: TurnWaiter[] }
  | { kind: "retry"; text: string; waiters: TurnWaiter[] };

/** The one main turn a session runs at a time. */
export class ActiveTurn {
  private readonly controller = new AbortController();
  readonly settled: Promise<void>;
  private markSettled!: () => void;

  constructor(readonly request: TurnRequest) {
    this.settled = new Promise((resolve) => (this.markSettled = resolve));
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True once an interrupt was requested; the turn is then settling. */
  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  abort(): void {
    this.controller.abort();
  }

  finish(): void {
    this.markSettled();
  }
}
