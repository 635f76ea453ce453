import { randomUUID } from "node:crypto";
import type {
  Change,
  SessionCancelPendingMessagesResult,
  SessionDeltaMessage,
  SessionInterruptResult,
  Snapshot,
  SubagentActivitiesState,
  TurnOutcome,
  TurnResult,
  UserTurnResult,
} from "../../generated/tau-v18.js";
import type { LineLog } from "../shared/log.js";
import { ActiveTurn, type TurnRequest } from "./active-turn.js";
import { CANCEL_CAUSES } from "./cancel-causes.js";
import type { ClientToolBroker } from "./client-tool-broker.js";
import { findMessage, userMessageRecord, userText } from "./conversation.js";
import { EphemeralContexts } from "./ephemeral-contexts.js";
import { MutationQueue } from "./mutation-queue.js";
import { PatchBuilder } from "./patch-builder.js";
import { PendingMessages, type PendingEntry } from "./pending-messages.js";
import type { PersistedSession, SessionStore } from "./persistence.js";
import { busy, cancelled, internalError, invalidRequest, ProtocolError } from "./protocol-error.js";
import { SessionState } from "./session-state.js";
import { Subagents } from "./subagents.js";
import { runScriptedTurn } from "./turn-runner.js";

export interface RuntimeDependencies {
  broker: ClientToolBroker;
  store: SessionStore;
  streamDelayMs: number;
  log: LineLog;
  checkDelta?(message: SessionDeltaMessage, snapshot: Snapshot): void;
}

const MUTATION_IN_PROGRESS = "a mutating session request is in progress";
const TURN_IN_PROGRESS = "a session turn is already running";

/**
 * One hosted session while it is loaded: its snapshot, pending input, mutation queue, the one main
 * turn, and side work (execs, samples, ephemeral contexts). Turn requests are accepted or refused
 * synchronously, so the busy rules of spec §4.2/§9 hold without locks; serialized mutations run
 * through the queue (see session-mutations.ts).
 */
export class SessionRuntime {
  readonly state: SessionState;
  readonly pending: PendingMessages;
  readonly ephemeral: EphemeralContexts;
  readonly subagents: Subagents;
  private readonly mutations: MutationQueue;
  /** User history entries of the current context, in order. */
  private readonly historyEntryIds: Set<string>;
  private activeTurn: ActiveTurn | null = null;
  private readonly sideWork = new Set<AbortController>();
  /** Active session.exec calls by execId, from every connection (ids are unique per session). */
  readonly execs = new Map<string, AbortController>();
  private closing = false;

  constructor(
    persisted: PersistedSession,
    private readonly deps: RuntimeDependencies,
  ) {
    this.historyEntryIds = new Set(persisted.historyEntryIds);
    this.state = new SessionState(persisted.snapshot, {
      onChange: () => this.persist(),
      checkDelta: deps.checkDelta,
      log: deps.log,
    });
    this.pending = new PendingMessages((state) =>
      this.state.publish({ version: 18, type: "session.pendingUserMessages", sessionId: this.id, state }),
    );
    this.ephemeral = new EphemeralContexts((event) => this.state.publish({ version: 18, type: "session.ephemeral", sessionId: this.id, event }));
    this.subagents = new Subagents({ state: this.state, streamDelayMs: deps.streamDelayMs, cwd: () => this.cwd, log: deps.log });
    this.mutations = new MutationQueue(() => this.drain());
    this.persist();
  }

  get id(): string {
    return this.state.sessionId;
  }

  get snapshot(): Snapshot {
    return this.state.snapshot;
  }

  /** The sub-agent activity channel's baseline (transient: empty after a restart). */
  subagentActivities(): SubagentActivitiesState {
    return this.subagents.activities();
  }

  get cwd(): string {
    return this.snapshot.executionEnvironment.cwd;
  }

  get env(): Record<string, string> | undefined {
    const environment = this.snapshot.executionEnvironment;
    return environment.kind === "local" ? (environment.env as Record<string, string> | undefined) : undefined;
  }

  persisted(): PersistedSession {
    return { format: 1, snapshot: this.state.snapshot, historyEntryIds: [...this.historyEntryIds] };
  }

  // ── Turn requests ────────────────────────────────────────────────────────────────────────────

  submit(text: string, historyEntryId?: string): Promise<UserTurnResult> {
    if (this.mutations.busy) throw busy(MUTATION_IN_PROGRESS);
    if (this.activeTurn || this.pending.size) throw busy(TURN_IN_PROGRESS);
    const entryId = this.resolveEntryId(historyEntryId);
    return new Promise((resolve, reject) =>
      this.startTurn({ kind: "user", entryId, text, waiters: [{ resolve: (turn) => resolve({ userHistoryEntryId: entryId, turn }), reject }] }),
    );
  }

  queue(text: string, historyEntryId?: string): Promise<UserTurnResult> {
    if (this.mutations.busy) throw busy(MUTATION_IN_PROGRESS);
    const entryId = this.resolveEntryId(historyEntryId);
    return new Promise((resolve, reject) => {
      if (this.isIdle()) {
        this.startTurn({ kind: "user", entryId, text, waiters: [{ resolve: (turn) => resolve({ userHistoryEntryId: entryId, turn }), reject }] });
      } else {
        this.pending.add({ id: entryId, mode: "queue", text, resolve, reject });
      }
    });
  }

  steer(text: string): Promise<UserTurnResult> {
    if (this.mutations.busy) throw busy(MUTATION_IN_PROGRESS);
    if (this.activeTurn?.aborted) throw busy("the session is being interrupted");
    return new Promise((resolve, reject) => {
      if (this.isIdle()) {
        const entryId = randomUUID();
        this.startTurn({ kind: "user", entryId, text, waiters: [{ resolve: (turn) => resolve({ userHistoryEntryId: entryId, turn }), reject }] });
      } else {
        this.pending.add({ mode: "steer", text, resolve, reject });
      }
    });
  }

  retry(): Promise<TurnResult> {
    if (this.mutations.busy) throw busy(MUTATION_IN_PROGRESS);
    if (!this.isIdle()) throw busy(TURN_IN_PROGRESS);
    const last = [...this.historyEntryIds].reverse().map((id) => findMessage(this.snapshot, id)).find((m) => m?.message.role === "user");
    if (!last || last.message.role !== "user") throw invalidRequest("retry is unavailable: the session has no previous user turn");
    const text = userText(last.message);
    return new Promise((resolve, reject) => this.startTurn({ kind: "retry", text, waiters: [{ resolve: (turn) => resolve({ turn }), reject }] }));
  }

  interrupt(): SessionInterruptResult {
    let interrupted = false;
    const turn = this.activeTurn;
    if (turn && !turn.aborted) {
      turn.abort();
      interrupted = true;
    }
    for (const entry of this.pending.takeSteers()) entry.reject(invalidRequest("session was interrupted"));
    for (const controller of this.sideWork) {
      if (controller.signal.aborted) continue;
      controller.abort(CANCEL_CAUSES.interrupt);
      interrupted = true;
    }
    return { interrupted, isTurnRunning: this.activeTurn !== null };
  }

  cancelPendingMessages(): SessionCancelPendingMessagesResult {
    const taken = this.pending.takeAll();
    for (const entry of taken) entry.reject(cancelled("pending user message was cancelled"));
    return { cancelled: taken.map(({ id, mode, text }) => ({ id, mode, text })) };
  }

  // ── Mutations (used by session-mutations.ts) ─────────────────────────────────────────────────

  /** Runs `mutation` through the session's mutation queue. */
  serialize<T>(mutation: () => T | Promise<T>): Promise<T> {
    return this.mutations.run(mutation);
  }

  /**
   * A context-replacing mutation (record, setPersona, reload, compact): pending input is rejected
   * with `reason`, the active turn is interrupted and awaited, then `change` runs.
   */
  replaceContext<T>(reason: string, change: () => T | Promise<T>): Promise<T> {
    return this.serialize(async () => {
      for (const entry of this.pending.takeAll()) entry.reject(invalidRequest(reason));
      const turn = this.activeTurn;
      if (turn) {
        turn.abort();
        await turn.settled;
      }
      return change();
    });
  }

  /** True while a turn runs or input is pending (rewind refuses then). */
  get hasWork(): boolean {
    return this.activeTurn !== null || this.pending.size > 0;
  }

  /**
   * The history entry id for new user input: the caller's (trimmed) or a generated one. A reused
   * id would make rewind and the turn ledger ambiguous, so it is refused.
   */
  resolveEntryId(requested: string | undefined): string {
    if (requested === undefined) return randomUUID();
    const id = requested.trim();
    if (this.entryIdTaken(id)) throw invalidRequest(`history entry id is already used in this session: ${id}`);
    return id;
  }

  isHistoryEntry(id: string): boolean {
    return this.historyEntryIds.has(id);
  }

  historyEntries(): ReadonlySet<string> {
    return this.historyEntryIds;
  }

  addHistoryEntry(id: string): void {
    this.historyEntryIds.add(id);
    this.persist();
  }

  removeHistoryEntries(ids: Iterable<string>): void {
    for (const id of ids) this.historyEntryIds.delete(id);
    this.persist();
  }

  // ── Side work ────────────────────────────────────────────────────────────────────────────────

  /** Registers an exec or sample so `session.interrupt` and shutdown can cancel it. */
  trackSideWork(controller: AbortController): () => void {
    this.sideWork.add(controller);
    return () => this.sideWork.delete(controller);
  }

  /** Host shutdown: interrupts everything and waits for the turn to settle (and be persisted). */
  async shutdown(): Promise<void> {
    this.closing = true;
    for (const entry of this.pending.takeAll()) entry.reject(new ProtocolError("internal_error", "the host is shutting down"));
    for (const controller of this.sideWork) controller.abort(CANCEL_CAUSES.shutdown);
    this.ephemeral.closeAll();
    const turn = this.activeTurn;
    if (turn) {
      turn.abort();
      await turn.settled;
    }
    await this.subagents.shutdown();
  }

  // ── Turn execution ───────────────────────────────────────────────────────────────────────────

  private isIdle(): boolean {
    return this.activeTurn === null && this.pending.size === 0;
  }

  private entryIdTaken(id: string): boolean {
    const active = this.activeTurn?.request;
    return (
      findMessage(this.snapshot, id) !== undefined ||
      Object.hasOwn(this.snapshot.turns, id) ||
      this.pending.has(id) ||
      (active?.kind === "user" && active.entryId === id)
    );
  }

  private startTurn(request: TurnRequest): void {
    if (this.closing) throw new ProtocolError("internal_error", "the host is shutting down");
    const turn = new ActiveTurn(request);
    const builder = new PatchBuilder(this.snapshot);
    if (this.snapshot.lifecycle !== "running") builder.add({ type: "lifecycle.set", lifecycle: "running" });
    if (request.kind === "user") {
      builder
        .add({ type: "message.append", message: userMessageRecord(request.entryId, request.text) })
        .messageItem(request.entryId)
        .add({ type: "turn.set", turn: { userHistoryEntryId: request.entryId, state: "running" } });
    }
    try {
      if (builder.changes.length) this.state.commit({ type: request.kind === "user" ? "user-message" : "agent-run" }, builder.changes);
    } catch (err) {
      throw internalError("failed to run session turn", err);
    }
    if (request.kind === "user") this.historyEntryIds.add(request.entryId);
    this.activeTurn = turn;
    void this.executeTurn(turn);
  }

  private async executeTurn(turn: ActiveTurn): Promise<void> {
    let outcome: TurnOutcome;
    let failure: unknown;
    try {
      outcome = await runScriptedTurn(
        {
          state: this.state,
          signal: turn.signal,
          streamDelayMs: this.deps.streamDelayMs,
          cwd: this.cwd,
          env: this.env,
          clientTools: this.deps.broker.toolsFor(this.id),
          callClientTool: (name, args, signal) => this.deps.broker.call(this.id, "main", name, args, signal),
          steeringWaiting: () => this.pending.hasSteers,
          subagents: this.subagents,
        },
        turn.request.text,
      );
    } catch (err) {
      failure = err;
      this.deps.log(`session ${this.id}: turn failed: ${(err as Error).stack ?? String(err)}`);
      outcome = { status: "failed", stopReason: "error", errorMessage: `failed to run session turn: ${(err as Error).message}` };
    }
    this.activeTurn = null;
    try {
      this.settle(turn.request, outcome);
    } catch (err) {
      failure ??= err;
      this.deps.log(`session ${this.id}: settling a turn failed: ${(err as Error).message}`);
    }
    for (const waiter of turn.request.waiters) {
      if (failure === undefined) waiter.resolve(outcome);
      else waiter.reject(internalError("failed to run session turn", failure));
    }
    turn.finish();
    this.drain();
  }

  /** Records the outcome; the session goes idle unless pending input starts right away. */
  private settle(request: TurnRequest, outcome: TurnOutcome): void {
    const changes: Change[] = [];
    if (request.kind === "user") changes.push({ type: "turn.set", turn: { userHistoryEntryId: request.entryId, state: "settled", outcome } });
    const continues = this.pending.size > 0 && !this.mutations.busy && !this.closing;
    if (!continues && this.snapshot.lifecycle !== "idle") changes.push({ type: "lifecycle.set", lifecycle: "idle" });
    if (changes.length) this.state.commit({ type: "agent-run" }, changes);
  }

  /** Starts waiting input when nothing runs: batched steering first, then queued messages in order. */
  private drain(): void {
    while (!this.activeTurn && !this.mutations.busy && !this.closing) {
      const steers = this.pending.takeSteers();
      if (steers.length) {
        this.startPending(randomUUID(), steers.map((s) => s.text).join("\n"), steers);
        continue;
      }
      const next = this.pending.takeNextQueued();
      if (!next) break;
      if (this.entryIdTaken(next.id)) {
        next.reject(invalidRequest(`history entry id is already used in this session: ${next.id}`));
        continue;
      }
      this.startPending(next.id, next.text, [next]);
    }
    if (!this.activeTurn && this.snapshot.lifecycle === "running") {
      this.state.commit({ type: "agent-run" }, [{ type: "lifecycle.set", lifecycle: "idle" }]);
    }
  }

  private startPending(entryId: string, text: string, entries: PendingEntry[]): void {
    try {
      this.startTurn({
        kind: "user",
        entryId,
        text,
        waiters: entries.map((entry) => ({ resolve: (turn) => entry.resolve({ userHistoryEntryId: entryId, turn }), reject: entry.reject })),
      });
    } catch (err) {
      const error = err instanceof ProtocolError ? err : internalError("failed to drain pending user message", err);
      for (const entry of entries) entry.reject(error);
    }
  }

  private persist(): void {
    this.deps.store.schedule(this.id, () => this.persisted());
  }
}
