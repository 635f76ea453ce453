import type { InteractionRecord } from "../../../generated/ask-v1.0.js";
import type { EventDraft } from "../event-draft.js";
import type { ToolCall } from "./tool-call.js";
import { InteractionIds, type InteractionIdKind } from "./interaction-ids.js";
import { errorReply, type ToolReply } from "./tool-reply.js";

/**
 * One session's pending interactions (DESIGN §4.4): each waits for one decision about one
 * client-tool call. The table gives ids, runs the deadline (which denies: consent is never
 * assumed), lets the first resolution win, stops whoever is still being asked once one has, and
 * emits the events that announce and end every interaction. What an interaction means belongs to
 * its tool's module, which describes it with an InteractionKind.
 */

/** How one tool's interactions show outside: their ids, their events and their listing. */
export interface InteractionKind<D> {
  readonly idKind: InteractionIdKind;
  /** The event announcing a new interaction. */
  created(p: Pending<D>): EventDraft;
  /** The event for one that ended without a decision: the deadline passed or the call was cancelled. */
  ended(p: Pending<D>, status: "expired" | "cancelled", reason: string): EventDraft;
  /** Tau's result when nobody decided in time (`waited` as "300 s"): always a refusal. */
  expiredReply(p: Pending<D>, reason: string, waited: string): ToolReply;
  /** Its interaction/list record; kinds without one (plans, resolved with plan/*) are not listed. */
  record?(p: Pending<D>): InteractionRecord;
}

export interface Pending<D> {
  readonly id: string;
  readonly call: ToolCall;
  /** What the tool's module keeps about it. */
  readonly data: D;
  /** Aborted once the interaction is settled, so clients still asking their users stop. */
  readonly asking: AbortSignal;
}

/** How an interaction ends: the event saying so and Tau's result, unless something else will answer the call (an approved command) or nothing may (Tau cancelled it). */
export interface Resolution {
  readonly event: EventDraft;
  readonly reply?: ToolReply;
}

export interface PendingInteractionsOptions {
  /** How long an interaction waits for a decision. */
  deadlineMs: number;
  /** Where interaction events go: the session's hub. */
  emit(draft: EventDraft): void;
  /** Sends a call's one result to Tau. */
  answer(call: ToolCall, reply: ToolReply): void;
}

interface Entry {
  readonly pending: Pending<unknown>;
  readonly kind: InteractionKind<unknown>;
  readonly asking: AbortController;
  readonly timer: NodeJS.Timeout;
}

/** "300 s" for whole seconds, "1500 ms" otherwise. */
const duration = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

export class PendingInteractions {
  private readonly ids = new InteractionIds();
  /** Unsettled interactions by id, in creation order. */
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly options: PendingInteractionsOptions) {}

  /**
   * Opens an interaction about `call`, starts its deadline and announces it. A listener of the
   * announcement may settle it at once: check isPending before asking anyone.
   */
  open<D>(kind: InteractionKind<D>, call: ToolCall, data: D): Pending<D> {
    const asking = new AbortController();
    const pending: Pending<D> = { id: this.ids.next(kind.idKind), call, data, asking: asking.signal };
    const timer = setTimeout(() => this.expire(pending), this.options.deadlineMs);
    timer.unref?.();
    this.entries.set(pending.id, { pending, kind, asking, timer });
    this.options.emit(kind.created(pending));
    return pending;
  }

  /** An interaction decided as it arose (a tool granted for the session): it gets an id and its event, and never waits. */
  decided(idKind: InteractionIdKind, event: (id: string) => EventDraft): void {
    this.options.emit(event(this.ids.next(idKind)));
  }

  isPending(p: Pending<unknown>): boolean {
    return this.entries.get(p.id)?.pending === p;
  }

  /** The pending interaction `id`, if it is one of `kind`. */
  find<D>(kind: InteractionKind<D>, id: string): Pending<D> | undefined {
    const entry = this.entries.get(id);
    return entry?.kind === kind ? (entry.pending as Pending<D>) : undefined;
  }

  /** Every pending interaction of `kind`, oldest first. */
  all<D>(kind: InteractionKind<D>): Array<Pending<D>> {
    return [...this.entries.values()].filter((entry) => entry.kind === kind).map((entry) => entry.pending as Pending<D>);
  }

  /** interaction/list: the pending interactions of the listed kinds, oldest first. */
  records(): InteractionRecord[] {
    return [...this.entries.values()].flatMap(({ kind, pending }) => (kind.record ? [kind.record(pending)] : []));
  }

  /** Settles `p` unless something settled it first (first resolution wins); true when this one did. */
  resolve(p: Pending<unknown>, resolution: Resolution): boolean {
    const entry = this.entries.get(p.id);
    if (entry?.pending !== p) return false;
    this.entries.delete(p.id);
    clearTimeout(entry.timer);
    entry.asking.abort();
    this.options.emit(resolution.event);
    if (resolution.reply) this.options.answer(p.call, resolution.reply);
    return true;
  }

  /** Tau cancelled `call`: its interaction ends, says so, and Tau hears nothing more about it. */
  cancelCall(call: ToolCall, reason: string): void {
    for (const { pending, kind } of [...this.entries.values()]) {
      if (pending.call === call) this.resolve(pending, { event: kind.ended(pending, "cancelled", reason) });
    }
  }

  /** Session closed or the bridge connection lost: every interaction ends, and Tau hears so (if it still can) rather than waiting for its own deadline. */
  cancelAll(reason: string): void {
    for (const { pending, kind } of [...this.entries.values()]) {
      this.resolve(pending, { event: kind.ended(pending, "cancelled", reason), reply: errorReply(`cancelled: ${reason}`) });
    }
  }

  /** The deadline passed with nobody deciding: deny, never assume consent. */
  private expire(p: Pending<unknown>): void {
    const entry = this.entries.get(p.id);
    if (entry?.pending !== p) return;
    const waited = duration(this.options.deadlineMs);
    const reason = `nobody decided within ${waited}`;
    this.resolve(p, { event: entry.kind.ended(p, "expired", reason), reply: entry.kind.expiredReply(p, reason, waited) });
  }
}
