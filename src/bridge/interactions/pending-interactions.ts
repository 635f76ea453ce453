import type { InteractionRecord } from "../../../generated/ask-v1.0.js";
import { withEventCause } from "../../shared/event-cause.js";
import type { Log } from "../../shared/log.js";
import type { InteractionAnswer, InteractionCounters, SharedInteraction } from "../../store/interactions.js";
import type { EventDraft } from "../event-draft.js";
import type { InteractionShare } from "./interaction-share.js";
import { errorReply, type ToolCall, type ToolReply } from "./tool-call.js";
import { InteractionIds, type InteractionIdKind } from "./interaction-ids.js";
import { errorText } from "../../shared/unknown-values.js";

/**
 * One session's pending interactions (DESIGN §4.4): each waits for one decision about one
 * client-tool call. The table gives ids, runs the deadline (which denies: consent is never
 * assumed), lets the first resolution win, stops whoever is still being asked once one has, and
 * emits the events that announce and end every interaction. What an interaction means belongs to
 * its tool's module, which describes it with an InteractionKind.
 *
 * The table lives on the replica that holds the calls; every interaction is also published in the
 * interaction store, where any replica may answer it. A decision made here goes through the store
 * too (`decide`), so the first answer wins across all replicas; the store hands the winning one back
 * (`deliver`), and only then does the interaction end here. With the memory store that round trip
 * happens within the call that decided.
 */

/** How one tool's interactions show outside: their ids, their events and their listing. */
export interface InteractionKind<D> {
  readonly idKind: InteractionIdKind;
  /** The event announcing a new interaction. */
  created(p: Pending<D>): EventDraft;
  /** The event for one that ended without a decision: the deadline passed or the call was cancelled (also one another replica left behind, see endLeftBehind). */
  ended(p: Pick<Pending<D>, "id" | "data">, status: "expired" | "cancelled", reason: string): EventDraft;
  /**
   * Told of one that another replica held and left pending when it went away, once it ended here
   * (endLeftBehind): what is known of it, for the record of it.
   */
  leftBehind?(p: Pick<Pending<D>, "id" | "data"> & { readonly callId: string }, reason: string): void;
  /** Tau's result when nobody decided in time (`waited` as "300 s"): always a refusal. */
  expiredReply(p: Pending<D>, reason: string, waited: string): ToolReply;
  /** Its interaction/list record; kinds without one (plans, resolved with plan/*) are not listed. */
  record?(p: Pending<D>): InteractionRecord;
}

export interface Pending<D> {
  readonly id: string;
  readonly call: ToolCall;
  /** What the tool's module keeps about it (plain JSON: it is shared with the other replicas). */
  readonly data: D;
  /** Aborted once the interaction is settled, so clients still asking their users stop. */
  readonly asking: AbortSignal;
  /**
   * Resolves once the interaction's event is in the session's log here (or it will never be), so
   * whoever asks a client about it can relate the two: the Codex dialect finds the command item
   * of an approval when its thread sees `approval.required`. With a shared store that event goes
   * out only once the interaction is shared, and comes back through the store.
   */
  readonly announced: Promise<void>;
}

/** How an interaction ends: the event saying so and Tau's result, unless something else will answer the call (an approved command) or nothing may (Tau cancelled it). */
export interface Resolution {
  readonly event: EventDraft;
  readonly reply?: ToolReply;
}

/**
 * Carries out a decision that won (made here or on another replica); what it contains is the tool
 * module's. A vote given on another replica (InteractionStore.vote) is handed over the same way: its
 * handler returns the promise of counting it, and the vote is done with once counted (it sends Tau
 * nothing itself; the decision its count may lead to is an answer of its own).
 */
export type DecisionHandler<D> = (p: Pending<D>, decision: unknown) => void | Promise<void>;

export interface PendingInteractionsOptions {
  sessionId: string;
  /** How long an interaction waits for a decision. */
  deadlineMs: number;
  /** Where interaction events go: the session's hub (`key`: the same key never appends twice to a shared log). */
  emit(draft: EventDraft, key?: string): void;
  /** Resolves once every event emitted so far is in the session's log here (a shared log: back from the store). */
  logged(): Promise<void>;
  /** Sends a call's one result to Tau. */
  answer(call: ToolCall, reply: ToolReply): void;
  /** Resolves once Tau has answered the call's result (true), or false when the result could not be sent. */
  settled(call: ToolCall): Promise<boolean>;
  /** The call of an answered interaction another replica opened and can no longer serve, taken over here. */
  adopt(shared: SharedInteraction): ToolCall;
  share: InteractionShare;
  /** The highest interaction numbers the session has used (ids are never reused). */
  used?: InteractionCounters;
  log?: Log;
}

interface Entry {
  readonly pending: Pending<unknown>;
  readonly kind: InteractionKind<unknown>;
  readonly asking: AbortController;
  readonly timer?: NodeJS.Timeout;
}

/**
 * The append key of an interaction's resolution event. An answer taken over by a new owner after
 * the old one died is carried out twice (the old owner may have appended its event just before
 * dying): with one key per interaction the shared log keeps the first and ignores the second.
 */
const resolutionKey = (interactionId: string) => `interaction-resolved:${interactionId}`;

/**
 * Why an interaction whose call another replica held ends without a decision on the host's next
 * owner: that replica is gone (stopped, killed, or cut off from the host), and Tau cancelled the
 * call with its connection (a client-tool call belongs to the connection it was sent to, spec §7).
 */
export const HOLDER_GONE = "the gateway replica holding the call is gone, and Tau cancelled the call with its connection";

/** "300 s" for whole seconds, "1500 ms" otherwise. */
const duration = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

export class PendingInteractions {
  private readonly ids: InteractionIds;
  /** Unsettled interactions by id, in creation order. */
  private readonly entries = new Map<string, Entry>();
  /** Each kind and what carries out its decisions, by id kind. */
  private readonly kinds = new Map<InteractionIdKind, { kind: InteractionKind<unknown>; decided: DecisionHandler<unknown> }>();

  constructor(private readonly options: PendingInteractionsOptions) {
    this.ids = new InteractionIds(options.used);
  }

  /** Makes `decided` carry out the decisions about interactions of `kind`. */
  register<D>(kind: InteractionKind<D>, decided: DecisionHandler<D>): void {
    this.kinds.set(kind.idKind, { kind: kind as InteractionKind<unknown>, decided: decided as DecisionHandler<unknown> });
  }

  /**
   * Opens an interaction about `call`, starts its deadline, publishes it and announces it. A
   * listener of the announcement may settle it at once: check isPending before asking anyone.
   */
  open<D>(kind: InteractionKind<D>, call: ToolCall, data: D): Pending<D> {
    const asking = new AbortController();
    let announced!: () => void;
    const pending: Pending<D> = { id: this.ids.next(kind.idKind), call, data, asking: asking.signal, announced: new Promise<void>((resolve) => (announced = resolve)) };
    const timer = setTimeout(() => this.expire(pending), this.options.deadlineMs);
    timer.unref?.();
    this.entries.set(pending.id, { pending, kind: kind as InteractionKind<unknown>, asking, timer });
    const announce = () => {
      if (!this.isPending(pending)) return announced();
      this.options.emit(kind.created(pending));
      this.options.logged().then(announced, announced);
    };
    const { store } = this.options.share;
    const published = store.open(this.shared(kind, pending), this.ids.last(kind.idKind));
    if (store.kind === "memory") {
      announce();
    } else {
      // Announced once every replica can see it, so a client that reads the event can answer it anywhere.
      published.then(announce, (error: unknown) => {
        this.failedToPublish(pending, error);
        announced();
      });
    }
    return pending;
  }

  /**
   * Asks a client about `p` once it is announced (see Pending.announced); undefined without asking
   * when it was settled meanwhile.
   */
  async whenAnnounced<T>(p: Pending<unknown>, ask: () => Promise<T>): Promise<T | undefined> {
    await p.announced;
    // What the clients are sent names the interaction as its cause (the inspector shows who was asked).
    return this.isPending(p) ? withEventCause({ sessionId: this.options.sessionId, interactionId: p.id }, ask) : undefined;
  }

  /** Ids carry on after the numbers the session used on other replicas (this one takes the session's calls over). */
  raiseNumbers(used: InteractionCounters): void {
    this.ids.raise(used);
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

  /** interaction/list of the interactions held here: the pending interactions of the listed kinds, oldest first. */
  records(): InteractionRecord[] {
    return [...this.entries.values()].flatMap(({ kind, pending }) => (kind.record ? [kind.record(pending)] : []));
  }

  /**
   * A decision about `p` made on this replica: it is carried out if it is the first answer to `p`
   * on any replica (true), and changes nothing otherwise (false).
   */
  decide(p: Pending<unknown>, decision: unknown): Promise<boolean> {
    const entry = this.entries.get(p.id);
    if (entry?.pending !== p) return Promise.resolve(false);
    const { store, hostKey } = this.options.share;
    return store.resolve(hostKey, this.options.sessionId, p.id, [entry.kind.idKind], decision).catch((error: unknown) => {
      this.options.log?.("warn", "an interaction's answer could not be recorded", { sessionId: this.options.sessionId, interactionId: p.id, error: errorText(error) });
      return false;
    });
  }

  /**
   * The answer that won for one of this session's interactions, from the store: it is carried out,
   * and the promise says when Tau has the call's result (true), or that sending it failed and the
   * delivery must be tried again (false).
   */
  async deliver(answer: InteractionAnswer): Promise<boolean> {
    const { interaction, decision } = answer;
    let entry = this.entries.get(interaction.id);
    if (entry && entry.pending.call.message.callId !== interaction.call.callId) {
      // Not the call this id stands for here (the store refuses a reused id, so this is not expected).
      this.options.log?.("warn", "an answer names an interaction of another call; dropped", { sessionId: this.options.sessionId, interactionId: interaction.id });
      return true;
    }
    if (!entry) {
      // Ended here already (deadline, cancelled call, closed session): Tau hears nothing more.
      if (interaction.openedBy === this.options.share.replicaId) return true;
      // A vote only the replica holding the call could count, and that replica is gone, its count
      // with it (Tau cancelled the call with its connection): it counts for nothing, and the
      // interaction ends unless it has already (see endLeftBehind).
      if (answer.vote) return this.endLeftBehindOne(interaction).then(() => true);
      entry = this.adopt(interaction);
      if (!entry) return true;
    }
    const handler = this.kinds.get(entry.kind.idKind);
    if (!handler) return true;
    const counting = handler.decided(entry.pending, decision);
    if (counting) return counting.then(() => true);
    return this.options.settled(entry.pending.call);
  }

  /** An event about `p` that does not end it (a vote counted towards it), while it is pending. */
  tell(p: Pending<unknown>, event: EventDraft): void {
    if (this.isPending(p)) this.options.emit(event);
  }

  /** Settles `p` unless something settled it first (first resolution wins); true when this one did. */
  resolve(p: Pending<unknown>, resolution: Resolution): boolean {
    const entry = this.entries.get(p.id);
    if (entry?.pending !== p) return false;
    this.entries.delete(p.id);
    clearTimeout(entry.timer);
    // Each client still asked has its prompt withdrawn, in its dialect's words; those words name the interaction as their cause.
    withEventCause({ sessionId: this.options.sessionId, interactionId: p.id }, () => entry.asking.abort());
    this.options.emit(resolution.event, resolutionKey(p.id));
    if (resolution.reply) this.options.answer(p.call, resolution.reply);
    return true;
  }

  /** Tau cancelled `call`: its interaction ends, says so, and Tau hears nothing more about it. */
  cancelCall(call: ToolCall, reason: string): void {
    for (const { pending, kind } of [...this.entries.values()]) {
      if (pending.call !== call) continue;
      this.withdraw(pending);
      this.resolve(pending, { event: kind.ended(pending, "cancelled", reason) });
    }
  }

  /**
   * This replica observes the session with the gateway's tools, as the host's owner. Tau attaches
   * one connection's tools to a session at a time, so every interaction still pending in the store
   * that is not held here is about a call Tau cancelled with the connection of the replica that
   * opened it, which is gone without ending it (killed, or cut off from the store). Nobody can
   * answer such a call any more: each one ends here, for every replica, with its event, rather
   * than staying pending (and answerable) until its deadline. An answer that won before is on its
   * way in the answer stream and is carried out as always.
   */
  async endLeftBehind(): Promise<void> {
    const { store, hostKey } = this.options.share;
    for (const shared of await store.pending(hostKey, this.options.sessionId)) {
      if (!this.entries.has(shared.id)) await this.endLeftBehindOne(shared);
    }
  }

  /** Ends one interaction whose call is over elsewhere (endLeftBehind), unless something ended it first. */
  private async endLeftBehindOne(shared: SharedInteraction): Promise<void> {
    const { store, hostKey } = this.options.share;
    const { sessionId } = this.options;
    const handler = this.kinds.get(shared.kind);
    if (!handler || !(await store.withdraw(hostKey, sessionId, shared.id))) return;
    this.options.log?.("info", "an interaction another replica left pending ended: its call is over", { sessionId, interactionId: shared.id, openedBy: shared.openedBy });
    this.options.emit(handler.kind.ended({ id: shared.id, data: shared.data }, "cancelled", HOLDER_GONE), resolutionKey(shared.id));
    handler.kind.leftBehind?.({ id: shared.id, data: shared.data, callId: shared.call.callId }, HOLDER_GONE);
  }

  /** Session closed or the bridge connection lost: every interaction ends, and Tau hears so (if it still can) rather than waiting for its own deadline. */
  cancelAll(reason: string): void {
    for (const { pending, kind } of [...this.entries.values()]) {
      this.withdraw(pending);
      this.resolve(pending, { event: kind.ended(pending, "cancelled", reason), reply: errorReply(`cancelled: ${reason}`) });
    }
  }

  /** The deadline passed with nobody deciding: deny, never assume consent — unless an answer won meanwhile, which is on its way. */
  private expire(p: Pending<unknown>): void {
    if (!this.isPending(p)) return;
    const { store, hostKey } = this.options.share;
    store.withdraw(hostKey, this.options.sessionId, p.id).then(
      (withdrawn) => {
        if (withdrawn) this.settleExpired(p);
      },
      (error: unknown) => {
        // The store is out of reach: the deadline still denies here (no answer can be delivered either).
        this.options.log?.("warn", "an expired interaction could not be withdrawn from the store", { sessionId: this.options.sessionId, interactionId: p.id, error: errorText(error) });
        this.settleExpired(p);
      },
    );
  }

  private settleExpired(p: Pending<unknown>): void {
    const entry = this.entries.get(p.id);
    if (entry?.pending !== p) return;
    const waited = duration(this.options.deadlineMs);
    const reason = `nobody decided within ${waited}`;
    this.resolve(p, { event: entry.kind.ended(p, "expired", reason), reply: entry.kind.expiredReply(p, reason, waited) });
  }

  /** Ends `p` in the store too (the call is over here whatever the store says). */
  private withdraw(p: Pending<unknown>): void {
    const { store, hostKey } = this.options.share;
    store.withdraw(hostKey, this.options.sessionId, p.id).catch((error: unknown) => {
      this.options.log?.("warn", "an ended interaction could not be withdrawn from the store", { sessionId: this.options.sessionId, interactionId: p.id, error: errorText(error) });
    });
  }

  /** An interaction nobody else can see cannot be answered anywhere but here: it still waits, for answers here and its deadline. */
  private failedToPublish(p: Pending<unknown>, error: unknown): void {
    this.options.log?.("warn", "an interaction could not be shared with the other replicas", { sessionId: this.options.sessionId, interactionId: p.id, error: errorText(error) });
    const entry = this.entries.get(p.id);
    if (entry?.pending === p) this.resolve(p, { event: entry.kind.ended(p, "cancelled", "the gateway could not record it"), reply: errorReply("cancelled: the gateway could not record the interaction") });
  }

  /** Takes over an answered interaction whose replica is gone: its call is answered from here. */
  private adopt(shared: SharedInteraction): Entry | undefined {
    const handler = this.kinds.get(shared.kind);
    if (!handler) return undefined;
    const asking = new AbortController();
    const pending: Pending<unknown> = { id: shared.id, call: this.options.adopt(shared), data: shared.data, asking: asking.signal, announced: Promise.resolve() };
    const entry: Entry = { pending, kind: handler.kind, asking };
    this.entries.set(pending.id, entry);
    return entry;
  }

  /** The interaction as every replica sees it. */
  private shared<D>(kind: InteractionKind<D>, p: Pending<D>): SharedInteraction {
    const { message } = p.call;
    const { hostKey, replicaId } = this.options.share;
    const record = kind.record?.(p);
    return {
      id: p.id,
      sessionId: this.options.sessionId,
      kind: kind.idKind,
      hostKey,
      openedBy: replicaId,
      call: { ...message },
      data: p.data,
      ...(record ? { record } : {}),
      deadlineAt: Date.now() + this.options.deadlineMs,
    };
  }
}
