/**
 * One receipt per command-tool call, from proposed to returned: the call's digest, the rule that
 * matched (if any), whom it asked, each vote, who or what decided (a client's answer, the deadline,
 * the policy's rule, the session's mode or a session grant), whether it ran and how it ended. A
 * receipt is finished when its result is returned to Tau (or the call is cancelled); finished
 * receipts go to the sinks (the audit file, span events) and the newest of each session are kept
 * to be read back (`GET /sessions/:id/receipts`); every step, as it is added, is told to the
 * watcher (the inspector's approvals panel follows receipts live).
 */

export type ReceiptStep =
  | { readonly step: "proposed"; readonly at: string }
  | { readonly step: "asked"; readonly at: string; readonly whom: string }
  | { readonly step: "vote"; readonly at: string; readonly approver: string; readonly approve: boolean }
  | {
      readonly step: "decided";
      readonly at: string;
      readonly by: ReceiptDecider;
      readonly outcome: "approved" | "rejected";
      readonly detail?: string;
      /** The principals whose votes decided (a `require` rule's approvers, or the one who vetoed). */
      readonly approvers?: readonly string[];
    }
  /** `digest`: of the call as it ran (the one decided: a changed call is not run). */
  | { readonly step: "executed"; readonly at: string; readonly digest: string }
  | { readonly step: "returned"; readonly at: string; readonly ok: boolean; readonly error?: string };

/** Who or what decided: a client (by its answer), the deadline, the policy (by rule), the mode, or a grant for the session. */
export type ReceiptDecider = "client" | "deadline" | "rule" | "mode" | "grant";

export interface Receipt {
  readonly sessionId: string;
  readonly callId: string;
  readonly tool: string;
  readonly digest: string;
  readonly policyVersion: string;
  /** The rule that matched: its name and place; absent when none did. */
  readonly rule?: { readonly name: string; readonly index: number };
  /** The interaction that asked, if one did. */
  interactionId?: string;
  readonly steps: ReceiptStep[];
}

export type ReceiptSink = (receipt: Receipt) => void;

/** Told each receipt as a step is added to it (the step added is its last). */
export type ReceiptWatch = (receipt: Receipt) => void;

/** Receipts kept per session to be read back. */
export const RECEIPTS_KEPT_PER_SESSION = 200;

/** A session's receipts: those under way by call, and the newest finished ones. */
export class SessionReceipts {
  private readonly open = new Map<string, Receipt>();
  private readonly finished: Receipt[] = [];

  constructor(
    private readonly sink: ReceiptSink | undefined,
    private readonly now: () => Date = () => new Date(),
    private readonly kept = RECEIPTS_KEPT_PER_SESSION,
    private readonly watch?: ReceiptWatch,
  ) {}

  /** Starts the receipt of a call. */
  propose(receipt: Omit<Receipt, "steps">): Receipt {
    const started: Receipt = { ...receipt, steps: [{ step: "proposed", at: this.stamp() }] };
    this.open.set(receipt.callId, started);
    this.watch?.(started);
    return started;
  }

  asked(callId: string, interactionId: string, whom: string): void {
    const receipt = this.open.get(callId);
    if (!receipt) return;
    receipt.interactionId = interactionId;
    this.add(receipt, { step: "asked", at: this.stamp(), whom });
  }

  vote(callId: string, approver: string, approve: boolean): void {
    this.add(this.open.get(callId), { step: "vote", at: this.stamp(), approver, approve });
  }

  decided(callId: string, by: ReceiptDecider, outcome: "approved" | "rejected", detail?: string, approvers?: readonly string[]): void {
    this.add(this.open.get(callId), { step: "decided", at: this.stamp(), by, outcome, ...(detail ? { detail } : {}), ...(approvers ? { approvers } : {}) });
  }

  executed(callId: string, digest: string): void {
    this.add(this.open.get(callId), { step: "executed", at: this.stamp(), digest });
  }

  /** The result went back to Tau (or nothing will): the receipt is finished and handed to the sink. */
  returned(callId: string, ok: boolean, error?: string): void {
    const receipt = this.open.get(callId);
    if (!receipt) return;
    this.open.delete(callId);
    this.finished.push(receipt);
    if (this.finished.length > this.kept) this.finished.splice(0, this.finished.length - this.kept);
    this.add(receipt, { step: "returned", at: this.stamp(), ok, ...(error ? { error } : {}) });
    this.sink?.(receipt);
  }

  /** The finished receipts kept, oldest first, then those under way. */
  list(): Receipt[] {
    return [...this.finished, ...this.open.values()];
  }

  private add(receipt: Receipt | undefined, step: ReceiptStep): void {
    if (!receipt) return;
    receipt.steps.push(step);
    this.watch?.(receipt);
  }

  private stamp(): string {
    return this.now().toISOString();
  }
}
