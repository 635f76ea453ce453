import { randomUUID } from "node:crypto";
import type { StopReason } from "../../generated/acp-v1.js";
import type { Event } from "../../generated/ask-v1.0.js";
import type { TurnOutcome } from "../../generated/tau-v18.js";
import type { SessionRecord } from "../bridge/session-registry.js";
import { submitOrSteer, type Delivery, type TurnRequests } from "../bridge/submit-or-steer.js";
import type { Log } from "../shared/log.js";
import { acpError } from "./errors.js";

/**
 * The prompt turns of one ACP connection on one session (its SessionLink): a prompt delivered
 * through the core (submit-or-steer.ts) as a turn of its own or into another client's running
 * turn, answered with how that turn stopped; rejoined by a relay's repeat of it after its
 * connection was cut; cancelled, or let go of when the connection leaves the session.
 */

export interface PromptTurnServices {
  upstream: TurnRequests;
  log?: Log;
}

/** How a turn the log reported aborted ended, when Tau's own outcome is not known (yet). */
const ABORTED: TurnOutcome = { status: "aborted", stopReason: "aborted" };

/** How long a settled turn's last events get to arrive after Tau answered `session.submit`. */
const SETTLE_GRACE_MS = 1000;

/** A prompt turn of this connection, from `session.submit` until it is answered. */
class OpenTurn {
  started = false;
  /** This connection's prompt started the turn (false: it steered into another client's turn). */
  startedHere = true;
  /** The text this connection steered into another client's turn, until the conversation shows it. */
  steered: string | undefined;
  cancelRequested = false;
  /** The session's log reported the turn aborted (Tau's report, or the gateway's when Tau did not answer an interrupt at shutdown). */
  aborted = false;
  readonly ended: Promise<void>;
  end!: () => void;

  constructor(readonly turnId: string) {
    this.ended = new Promise((resolve) => (this.end = resolve));
  }
}

export class PromptTurns {
  private turn: OpenTurn | undefined;
  /** Turns of a relay's prompts that will rejoin on this connection (relay-positions.ts): their user messages are the editor's own. */
  private readonly rejoining = new Set<string>();
  private readonly sessionId: string;

  constructor(
    private readonly record: SessionRecord,
    private readonly services: PromptTurnServices,
  ) {
    this.sessionId = record.sessionId;
  }

  /** A turn id as the gateway-wide tables of prompts in flight key it: within its session only (a client names any id it likes). */
  private keyOf(turnId: string): string {
    return `${this.sessionId} ${turnId}`;
  }

  /** A prompt turn of this connection is running. */
  get prompting(): boolean {
    return this.turn !== undefined;
  }

  /** A relay's prompts of these turns will rejoin on this connection: their user messages are its client's own. */
  rejoinsOn(turnIds: readonly string[]): void {
    for (const turnId of turnIds) this.rejoining.add(turnId);
  }

  /**
   * Runs one turn with `text`; resolves with how it stopped once its updates have been sent. While
   * another client's turn runs, `text` steers into it (as Codex's turn/start and Ask's session/send
   * do) and the prompt is answered when the turn that took it settles.
   */
  async prompt(text: string, turnId?: string): Promise<StopReason> {
    if (this.turn) throw acpError("busy", "a prompt is already running in this session on this connection: cancel it or wait for its answer");
    // A prompt repeated with the id of its turn (a relay's, after its connection was cut) rejoins that turn.
    if (turnId !== undefined && (this.record.hub.snapshot?.turns[turnId] || submitting.has(this.keyOf(turnId)))) return this.rejoin(turnId);
    // One that steered into another client's turn is answered by that steer, not steered again.
    const kept = turnId === undefined ? undefined : steered.get(this.keyOf(turnId));
    if (kept) return this.steeredTurn(this.steering(kept.into, text), kept.outcome);
    const own = new OpenTurn(turnId ?? randomUUID());
    let steering: OpenTurn | undefined;
    let submitted: Promise<{ outcome: TurnOutcome } | { error: unknown }> | undefined;
    let delivery: Delivery;
    try {
      delivery = await submitOrSteer(this.services.upstream, this.record.hub, {
        text,
        turnId: own.turnId,
        cancelled: () => own.cancelRequested,
        onSend: (sent) => {
          if (sent.kind === "submit") {
            this.turn = own;
            submitted = sent.request.then(
              (result) => ({ outcome: result.turn }),
              (error: unknown) => ({ error }),
            );
            const key = this.keyOf(own.turnId);
            submitting.set(key, submitted);
            void submitted.then(() => submitting.delete(key));
            return;
          }
          // Into another client's turn: answered with how that turn settles.
          steering = this.steering(sent.turnId, text);
          if (turnId !== undefined) keepSteer(this.keyOf(turnId), sent.turnId, sent.request.then((answer) => answer.turn));
        },
      });
    } catch (error) {
      return this.failed(steering ?? own, error);
    }
    if (delivery.kind === "busy") return this.failed(own, delivery.error);
    if (delivery.kind !== "submit") return this.steeredTurn(steering!, delivery.request.then((answer) => answer.turn));
    return this.started(own, submitted!);
  }

  /** A prompt's own turn, accepted by Tau: answered with how it settled, once its updates have been sent. */
  private async started(turn: OpenTurn, submitted: Promise<{ outcome: TurnOutcome } | { error: unknown }>): Promise<StopReason> {
    try {
      const first = await Promise.race([turn.ended.then(() => undefined), submitted]);
      if (first && "error" in first) throw first.error;
      // Tau answered first: its last deltas are normally already in, give them a moment otherwise.
      if (first) await Promise.race([turn.ended, delay(SETTLE_GRACE_MS)]);
      // An abort the log reported ahead of Tau's snapshot needs no wait for Tau: the answer is `cancelled` either way.
      const outcome =
        this.settledOutcome(turn.turnId) ?? first?.outcome ?? (turn.aborted ? ABORTED : await submitted.then((s) => ("outcome" in s ? s.outcome : undefined)));
      return this.stopReasonOf(turn, outcome);
    } catch (error) {
      return this.failed(turn, error);
    } finally {
      if (this.turn === turn) this.turn = undefined;
    }
  }

  /** How a prompt whose turn came apart is answered: `cancelled` when it was cancelled, however that happened (protocol §6). */
  private failed(turn: OpenTurn, error: unknown): StopReason {
    if (this.turn === turn) this.turn = undefined;
    if (turn.cancelRequested) return "cancelled";
    // An interrupt of the turn it steered into (from any client) drops the steering with it.
    if (!turn.startedHere && this.settledOutcome(turn.turnId)?.status === "aborted") return "cancelled";
    throw error;
  }

  /**
   * How a prompt's turn stopped, for its answer. A cancel that came after the turn ended but
   * before this answer still makes it `cancelled` (protocol §6: the pending prompt MUST be answered so).
   */
  private stopReasonOf(turn: OpenTurn, outcome: Parameters<typeof stopReason>[0] | undefined): StopReason {
    if (!outcome) throw acpError("internal_error", "the turn ended without an outcome");
    const reason = stopReason(outcome);
    return turn.cancelRequested ? "cancelled" : reason;
  }

  /**
   * A turn this connection's client started before (on a connection of its relay's that was cut):
   * answered when it settles, as its first prompt would have been. The answer Tau gives its
   * session.submit, still awaited on this gateway, is the outcome; otherwise (another replica
   * submitted it) the session's log says when it settles.
   */
  private async rejoin(turnId: string): Promise<StopReason> {
    const turn = new OpenTurn(turnId);
    turn.started = true;
    this.turn = turn;
    this.rejoining.delete(turnId);
    try {
      let outcome = this.settledOutcome(turnId);
      const submitted = submitting.get(this.keyOf(turnId));
      if (!outcome && submitted) {
        const answer = await submitted;
        if ("error" in answer) throw answer.error;
        await Promise.race([turn.ended, delay(SETTLE_GRACE_MS)]);
        outcome = this.settledOutcome(turnId) ?? answer.outcome;
      } else if (!outcome) {
        await turn.ended;
        outcome = this.settledOutcome(turnId) ?? (turn.aborted ? ABORTED : undefined);
      }
      return this.stopReasonOf(turn, outcome);
    } catch (error) {
      // A cancelled prompt is answered `cancelled` however its turn came apart (protocol §6).
      if (turn.cancelRequested) return "cancelled";
      throw error;
    } finally {
      if (this.turn === turn) this.turn = undefined;
    }
  }

  /** This connection's prompt, steered into the running turn `turnId` (another client's): the turn its updates follow from now on. */
  private steering(turnId: string, text: string): OpenTurn {
    const turn = new OpenTurn(turnId);
    turn.started = true;
    turn.startedHere = false;
    turn.steered = text;
    this.turn = turn;
    return turn;
  }

  /**
   * A prompt steered into another client's turn (see prompt): answered with how Tau's turn that
   * took it settled (`request`, Tau's answer to the steer).
   */
  private async steeredTurn(turn: OpenTurn, request: Promise<TurnOutcome>): Promise<StopReason> {
    try {
      const outcome = await request;
      // Its last deltas are normally already in; give them a moment otherwise.
      await Promise.race([turn.ended, delay(SETTLE_GRACE_MS)]);
      const reason = stopReason(outcome);
      return turn.cancelRequested ? "cancelled" : reason;
    } catch (error) {
      return this.failed(turn, error);
    } finally {
      if (this.turn === turn) this.turn = undefined;
    }
  }

  /**
   * session/cancel: interrupts the session's running turn, whoever started it (as Codex's
   * turn/interrupt and Ask's session/abort do), and this connection's turn not started yet; this
   * connection's prompt is answered `cancelled`.
   */
  cancel(): Promise<void> {
    const turn = this.turn;
    if (turn) turn.cancelRequested = true;
    else if (!this.record.hub.running) return Promise.resolve();
    return this.interrupt();
  }

  /**
   * session/close: cancels this connection's own work only — its prompt's turn, or its prompt not
   * started yet. A turn another client started belongs to the session and runs on for them.
   */
  cancelOwn(): Promise<void> {
    const turn = this.turn;
    if (!turn) return Promise.resolve();
    turn.cancelRequested = true;
    // Steered into another client's turn: answered `cancelled` when that turn ends, which runs on.
    return turn.startedHere ? this.interrupt() : Promise.resolve();
  }

  /** The connection's prompt is to be answered `cancelled` however its turn ends (its turn is interrupted by the caller); false when none is open. */
  markCancelled(): boolean {
    if (!this.turn) return false;
    this.turn.cancelRequested = true;
    return true;
  }

  /**
   * The connection lets go of the session: a turn of this connection still running after
   * `interruptAfterMs` (0: at once) is interrupted — one it only steered into, only at 0 (see
   * SessionLink.detach).
   */
  async letGo(interruptAfterMs: number): Promise<void> {
    const turn = this.turn;
    if (!turn) return;
    if (interruptAfterMs > 0) await Promise.race([turn.ended, delay(interruptAfterMs)]);
    if (this.turn === turn && !this.turnSettled(turn.turnId)) {
      turn.cancelRequested = true;
      if (turn.startedHere || interruptAfterMs === 0) await this.interrupt();
    }
  }

  /** A turn's start or end in the session's log: this connection's prompt follows its turn. */
  onTurnEvent(event: Event): void {
    const turn = this.turn;
    switch (event.type) {
      case "turn.started":
        if (turn && turn.turnId === event.payload.turnId) {
          turn.started = true;
          // A cancel that came before the turn started must still stop it.
          if (turn.cancelRequested) void this.interrupt();
        }
        return;
      case "turn.completed":
      case "turn.failed":
      case "turn.aborted":
        if (turn && turn.turnId === event.payload.turnId) {
          turn.aborted = event.type === "turn.aborted";
          turn.end();
        }
        return;
      default:
        return;
    }
  }

  /**
   * Whether a user message is this connection's prompt: the one its turn started with (the turn's
   * id is the message's), or the text it steered into another client's turn (Tau gives steered
   * text an id of its own; several steers at once arrive joined, and then count as others').
   */
  ownPrompt(message: { messageId: string; text: string }): boolean {
    if (this.rejoining.has(message.messageId)) return true;
    const turn = this.turn;
    if (!turn) return false;
    if (turn.steered === undefined) return message.messageId === turn.turnId;
    if (message.text !== turn.steered) return false;
    turn.steered = undefined;
    return true;
  }

  private interrupt(): Promise<void> {
    return this.services.upstream.request("session.interrupt", { sessionId: this.sessionId }).then(
      () => undefined,
      (error: unknown) => this.services.log?.("warn", "session.interrupt failed", { sessionId: this.sessionId, error: String(error) }),
    );
  }

  private settledOutcome(turnId: string): TurnOutcome | undefined {
    const record = this.record.hub.snapshot?.turns[turnId];
    return record?.state === "settled" ? record.outcome : undefined;
  }

  private turnSettled(turnId: string): boolean {
    return this.settledOutcome(turnId) !== undefined;
  }
}

/**
 * The session.submit calls of this gateway's prompts, by session and turn id (PromptTurns.keyOf), until Tau answers them: a prompt
 * that rejoins its turn (see rejoin) may arrive on a new connection before Tau has the turn.
 */
const submitting = new Map<string, Promise<{ outcome: TurnOutcome } | { error: unknown }>>();

/**
 * A relay's prompts that steered into a running turn (another client's), by session and the prompt's turn id
 * (relay-positions.ts): the repeat of such a prompt after the relay's connection was cut is
 * answered by the steer it made, instead of steering the text in a second time. Kept as long as a
 * relay takes to come back, and at most STEERS_KEPT of them.
 */
const steered = new Map<string, { into: string; outcome: Promise<TurnOutcome> }>();
const STEER_KEPT_MS = 10 * 60_000;
const STEERS_KEPT = 10_000;

function keepSteer(key: string, into: string, outcome: Promise<TurnOutcome>): void {
  outcome.catch(() => undefined);
  steered.set(key, { into, outcome });
  if (steered.size > STEERS_KEPT) steered.delete(steered.keys().next().value!);
  setTimeout(() => steered.delete(key), STEER_KEPT_MS).unref();
}

/** How a settled turn answers session/prompt; a failed or blocked turn is an error carrying Tau's message. */
export function stopReason(outcome: TurnOutcome): StopReason {
  switch (outcome.status) {
    case "completed":
      return outcome.stopReason === "length" ? "max_tokens" : "end_turn";
    case "aborted":
      return "cancelled";
    case "failed":
      throw acpError("internal_error", outcome.errorMessage ?? "the turn failed", { stopReason: outcome.stopReason });
    case "blocked":
      throw acpError("internal_error", outcome.message, { reason: outcome.reason });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}
