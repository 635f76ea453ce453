import { randomUUID } from "node:crypto";
import type { ServerRequests, SessionUpdate, StopReason, ToolCallUpdate } from "../../generated/acp-v1.js";
import type { ApprovalDetails, Event, UserInputDetails } from "../../generated/ask-v1.0.js";
import type { TurnOutcome } from "../../generated/tau-v18.js";
import { ASK_USER_TOOL, InteractionError, SUBMIT_PLAN_TOOL } from "../bridge/interactions/index.js";
import type { SessionRecord } from "../bridge/session-registry.js";
import type { Log } from "../shared/log.js";
import type { RequestCause } from "../shared/request-cause.js";
import { TauResponseError, type TauUpstream } from "../tau/upstream.js";
import type { AcpClient } from "./client-state.js";
import { acpError } from "./errors.js";
import { EventUpdates, type UpdateContext } from "./event-updates.js";
import { replayHistory } from "./history.js";
import { commandToolOptions, permissionChoice, PLAN_OPTIONS, type PermissionChoice } from "./permission-options.js";
import { planEntries } from "./plan-entries.js";
import { questionAnswer, questionForm } from "./question-form.js";
import { eventsAfter, indexed, positionMeta, type LogPosition } from "./relay-positions.js";
import type { SessionChoices } from "./session-choices.js";
import type { SessionRoles } from "../bridge/session-roles.js";

/**
 * One ACP connection working with one session (created, loaded or resumed on it): it streams the
 * session's events to the client as `session/update`s, runs the connection's prompt turns, and
 * puts the session's interactions to the client — approvals and plans as
 * `session/request_permission`, `ask_user` questions as `elicitation/create` — resolving them
 * through the bridge core like any other client would.
 */

export interface SessionLinkServices {
  upstream: Pick<TauUpstream, "request">;
  /** Names of the operator's command tools. */
  commandTools: ReadonlySet<string>;
  /** Gateway tools whose calls wait for a decision (command tools, submit_plan, ask_user). */
  gatedTools: ReadonlySet<string>;
  /** What the session's users chose for the rest of the session (tools always rejected). */
  choices: SessionChoices;
  /** Every connection's link to the same session, this one included. */
  linksOfSession(): SessionLink[];
  /** Whose answers to permission requests and questions count (an observer's decides nothing). */
  roles: SessionRoles;
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

export class SessionLink {
  readonly sessionId: string;
  private readonly updates = new EventUpdates();
  private unsubscribe: (() => void) | undefined;
  private turn: OpenTurn | undefined;
  /** Requests to the client about an interaction, by interaction id: aborted once it is settled. */
  private readonly asking = new Map<string, AbortController>();
  /** Turns of a relay's prompts that will rejoin on this connection (relay-positions.ts): their user messages are the editor's own. */
  private readonly rejoining = new Set<string>();

  constructor(
    readonly client: AcpClient,
    readonly record: SessionRecord,
    private readonly services: SessionLinkServices,
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

  /**
   * Starts streaming the session's updates: after its history (session/load) or from now on. The
   * replay and the subscription happen in one go, so no event falls between them; interactions
   * already waiting are put to the client right after, and after the answer to `cause` (the
   * session/load or session/resume that attached it: an editor may refuse a request about a session
   * it has not been told about yet, and a refusal would deny the approval).
   */
  attach(options: { replay: boolean; cause?: RequestCause; after?: LogPosition; ownPrompts?: string[] }): void {
    if (options.replay) this.replay();
    for (const turnId of options.ownPrompts ?? []) this.rejoining.add(turnId);
    // A relay resuming after a place in the log gets what followed it first, in the same go as the subscription.
    if (options.after && !this.unsubscribe) {
      const context = this.updateContext();
      const missed = eventsAfter(this.record.hub.log, options.after, (event) => this.updates.translate(event, context)) ?? [];
      for (const { event, skip } of missed) this.onEvent(event, skip);
    }
    this.unsubscribe ??= this.record.hub.log.subscribe((event) => this.onEvent(event));
    // Pending on any replica of the gateway (read from the interaction store).
    const { shared } = this.record.interactions;
    Promise.all([shared.list(), shared.plans()]).then(
      ([pending, plans]) => {
        for (const interaction of pending) {
          if (interaction.kind === "approval") this.askPermission(interaction.id, interaction.payload, options.cause);
          else if (interaction.kind === "user_input") this.askQuestion(interaction.id, interaction.payload, options.cause);
        }
        for (const { id, plan } of plans) {
          // The plan the editor missed, as its plan panel shows one, then the request to approve it.
          if (!this.asking.has(id)) this.send({ sessionUpdate: "plan", entries: planEntries(plan) }, options.cause);
          this.askPlanApproval(id, plan, options.cause);
        }
      },
      (error: unknown) => this.services.log?.("warn", "listing pending interactions failed", { sessionId: this.sessionId, error: String(error) }),
    );
  }

  /** Sends the session's conversation so far (session/load). */
  replay(): void {
    const { snapshot } = this.record.hub;
    if (!snapshot) return;
    const { updates, toolCalls, texts } = replayHistory(snapshot, this.services.commandTools);
    for (const call of toolCalls) this.updates.known(call.id, call.name, call.finished);
    // The snapshot may run ahead of the session's events: what it gave of a message, the live chunks do not give again.
    for (const { messageId, kind, length } of texts) this.updates.given(messageId, kind, length);
    for (const update of updates) this.send(update);
    // Its sub-agents as they stand, after the conversation.
    for (const update of this.updates.subagents.replay(snapshot, this.record.hub.subagentActivities)) this.send(update);
  }

  /** session/cancel naming one of this session's sub-agents (its card's `_meta.subagent.sessionId`): interrupts that sub-agent alone. */
  async interruptSubagent(agentId: string): Promise<boolean> {
    const agent = this.record.hub.snapshot?.agents[agentId];
    if (!agent) return false;
    if (agent.run.status === "running") await this.services.upstream.request("session.interruptSubagent", { sessionId: this.sessionId, subagentId: agentId });
    return true;
  }

  /**
   * Sends an update about this session to this connection; one a request of its brought about
   * (`causedBy`) goes out after that request's answer (an editor drops updates of a session it
   * has not been told about yet).
   */
  send(update: SessionUpdate, causedBy?: RequestCause, at?: LogPosition): void {
    if (this.client.peer.closed) return;
    const meta = at && this.client.relayed ? { _meta: positionMeta(at) } : {};
    this.client.peer.notify("session/update", { sessionId: this.sessionId, update, ...meta }, causedBy);
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
    const steer = turnId === undefined ? undefined : steered.get(this.keyOf(turnId));
    if (steer) return this.steer(text, steer.into, { request: steer.outcome });
    const running = this.record.hub.activeTurnId;
    if (running) return this.steer(text, running, { promptTurnId: turnId });
    const turn = new OpenTurn(turnId ?? randomUUID());
    this.turn = turn;
    try {
      const submitted = this.services.upstream.request("session.submit", { sessionId: this.sessionId, text, historyEntryId: turn.turnId }).then(
        (result) => ({ outcome: result.turn }),
        (error: unknown) => ({ error }),
      );
      const key = this.keyOf(turn.turnId);
      submitting.set(key, submitted);
      void submitted.then(() => submitting.delete(key));
      const first = await Promise.race([turn.ended.then(() => undefined), submitted]);
      if (first && "error" in first) {
        // Lost the race with a turn another client started: steer into that one instead.
        const other = this.record.hub.activeTurnId;
        const lostRace = first.error instanceof TauResponseError && first.error.code === "busy" && !turn.cancelRequested && other !== undefined;
        if (!lostRace) throw first.error;
        this.turn = undefined;
        return await this.steer(text, other, { promptTurnId: turnId });
      }
      // Tau answered first: its last deltas are normally already in, give them a moment otherwise.
      if (first) await Promise.race([turn.ended, delay(SETTLE_GRACE_MS)]);
      // An abort the log reported ahead of Tau's snapshot needs no wait for Tau: the answer is `cancelled` either way.
      const outcome =
        this.settledOutcome(turn.turnId) ?? first?.outcome ?? (turn.aborted ? ABORTED : await submitted.then((s) => ("outcome" in s ? s.outcome : undefined)));
      return this.stopReasonOf(turn, outcome);
    } catch (error) {
      // A cancelled prompt is answered `cancelled` however its turn came apart (protocol §6).
      if (turn.cancelRequested) return "cancelled";
      throw error;
    } finally {
      if (this.turn === turn) this.turn = undefined;
    }
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

  /**
   * `text` into the running turn `turnId` (see prompt): answered with how Tau's turn that took it
   * settled. `promptTurnId`: the relay's turn id of the prompt, under which the steer is kept for a
   * repeat of the prompt; `request`: that kept steer, which the repeat waits for instead.
   */
  private async steer(text: string, turnId: string, how: { promptTurnId?: string; request?: Promise<TurnOutcome> }): Promise<StopReason> {
    const turn = new OpenTurn(turnId);
    turn.started = true;
    turn.startedHere = false;
    turn.steered = text;
    this.turn = turn;
    try {
      let request = how.request;
      if (!request) {
        request = this.services.upstream.request("session.steer", { sessionId: this.sessionId, text }).then((answer) => answer.turn);
        if (how.promptTurnId !== undefined) keepSteer(this.keyOf(how.promptTurnId), turnId, request);
      }
      const outcome = await request;
      // Its last deltas are normally already in; give them a moment otherwise.
      await Promise.race([turn.ended, delay(SETTLE_GRACE_MS)]);
      const reason = stopReason(outcome);
      return turn.cancelRequested ? "cancelled" : reason;
    } catch (error) {
      // An interrupt of the turn it steered into (from any client) drops the steering with it.
      if (turn.cancelRequested || this.settledOutcome(turnId)?.status === "aborted") return "cancelled";
      throw error;
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
   * The connection let go of the session (session/close, the gateway stopping) or went away: no
   * more updates, no more questions. A turn this connection started belongs to the session and
   * runs on for its other clients, or for this editor when it loads the session again — unless
   * `interruptAfterMs` is given (session/close, which cancels it; the gateway stopping): a turn of
   * this connection still running after that long is interrupted — one it only steered into, only
   * when the gateway stops (0).
   */
  async detach(interruptAfterMs?: number): Promise<void> {
    for (const controller of this.asking.values()) controller.abort();
    const turn = this.turn;
    if (turn && interruptAfterMs !== undefined) {
      if (interruptAfterMs > 0) await Promise.race([turn.ended, delay(interruptAfterMs)]);
      if (this.turn === turn && !this.turnSettled(turn.turnId)) {
        turn.cancelRequested = true;
        if (turn.startedHere || interruptAfterMs === 0) await this.interrupt();
      }
    }
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** An event of the session's log; `skip`: how many of its updates the client has already (a relay resuming). */
  private onEvent(event: Event, skip = 0): void {
    const turn = this.turn;
    // Its own prompt an editor shows already; other clients' prompts it is told of, live.
    if (event.type === "user.message" && this.ownPrompt(event.payload)) return;
    const updates = this.updates.translate(event, this.updateContext());
    for (const { update, index } of indexed(updates, skip)) this.send(update, undefined, [event.seq, index]);
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
      case "approval.required":
        return this.askPermission(event.payload.id, event.payload);
      case "input.requested":
        return this.askQuestion(event.payload.id, event.payload);
      case "plan.proposed":
        return this.askPlanApproval(event.payload.id, event.payload.plan);
      case "approval.updated":
      case "input.resolved":
        return this.stopAsking(event.payload.id);
      case "plan.approved":
      case "plan.rejected":
        if (event.payload.id) this.stopAsking(event.payload.id);
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
  private ownPrompt(message: { messageId: string; text: string }): boolean {
    if (this.rejoining.has(message.messageId)) return true;
    const turn = this.turn;
    if (!turn) return false;
    if (turn.steered === undefined) return message.messageId === turn.turnId;
    if (message.text !== turn.steered) return false;
    turn.steered = undefined;
    return true;
  }

  // ── Interactions ──────────────────────────────────────────────────────────

  /** A command tool call waits for approval: ask the user, unless they rejected the tool for the session. */
  private askPermission(interactionId: string, approval: ApprovalDetails, cause?: RequestCause): void {
    this.ifPending(interactionId, () => this.putPermission(interactionId, approval, cause));
  }

  private putPermission(interactionId: string, approval: ApprovalDetails, cause?: RequestCause): void {
    const { toolName } = approval;
    if (this.services.choices.rejectsAlways(toolName)) {
      return this.resolve(() => this.record.interactions.shared.reject(interactionId, `${toolName} is rejected for the rest of this session`));
    }
    const toolCall = this.toolCallFor(interactionId, toolName, `Run ${toolName}`, approval.args, cause);
    const options = commandToolOptions(toolName);
    this.ask(interactionId, "session/request_permission", { sessionId: this.sessionId, toolCall, options }, cause, (answer) => {
      const choice = answer instanceof Error ? failed(answer) : permissionChoice(answer, options);
      const interactions = this.record.interactions.shared;
      switch (choice.kind) {
        case "allow_once":
          return interactions.approve(interactionId, "once");
        case "allow_always":
          return interactions.approve(interactionId, "session");
        case "reject_once":
          return interactions.reject(interactionId);
        case "reject_always":
          this.services.choices.rejectAlways(toolName);
          return interactions.reject(interactionId, `${toolName} is rejected for the rest of this session`);
        case "cancelled":
          return interactions.reject(interactionId, "the user cancelled the turn");
        case "unusable":
          return interactions.reject(interactionId, `no usable answer to the permission request (${choice.reason})`);
      }
    });
  }

  /** A proposed plan: approving it lets the model carry it out (and, in plan mode, unlocks the command tools). */
  private askPlanApproval(interactionId: string, plan: string, cause?: RequestCause): void {
    if (this.asking.has(interactionId)) return;
    const toolCall = this.toolCallFor(interactionId, SUBMIT_PLAN_TOOL, "Plan for approval", { plan }, cause);
    this.ask(interactionId, "session/request_permission", { sessionId: this.sessionId, toolCall, options: PLAN_OPTIONS }, cause, (answer) => {
      const choice = answer instanceof Error ? failed(answer) : permissionChoice(answer, PLAN_OPTIONS);
      const interactions = this.record.interactions.shared;
      // This plan alone: another one proposed meanwhile has a request of its own.
      if (choice.kind === "allow_once") return interactions.decidePlan(interactionId, { action: "approve" });
      return interactions.decidePlan(interactionId, { action: "reject", ...(choice.kind === "unusable" ? { feedback: `no usable answer (${choice.reason})` } : {}) });
    });
  }

  /**
   * An `ask_user` question: a form for clients that can show one. When the turn is an ACP
   * client's and no connection of the session can ask, the question is declined at once, so the
   * model asks in its reply instead of waiting for the deadline.
   */
  private askQuestion(interactionId: string, question: UserInputDetails, cause?: RequestCause): void {
    this.ifPending(interactionId, () => this.putQuestion(interactionId, question, cause));
  }

  private putQuestion(interactionId: string, question: UserInputDetails, cause?: RequestCause): void {
    if (!this.client.canElicit) {
      const links = this.services.linksOfSession();
      if (links.some((l) => l.prompting) && !links.some((l) => l.client.canElicit && !l.client.peer.closed)) {
        this.resolve(() => this.record.interactions.shared.decline(interactionId, "the user's editor cannot show questions; ask in your reply instead"));
      }
      return;
    }
    const toolCallId = this.updates.link(interactionId, ASK_USER_TOOL);
    this.ask(interactionId, "elicitation/create", questionForm(this.sessionId, toolCallId, question), cause, (answer) => {
      const outcome = answer instanceof Error ? { unanswered: `the question could not be shown (${answer.message})` } : questionAnswer(answer);
      const interactions = this.record.interactions.shared;
      return "answered" in outcome ? interactions.respond(interactionId, outcome.answered) : interactions.decline(interactionId, outcome.unanswered);
    });
  }

  /** The tool call a permission request is about: the card already shown, or one announced now. */
  private toolCallFor(interactionId: string, toolName: string, title: string, args?: Record<string, unknown>, cause?: RequestCause): ToolCallUpdate {
    let toolCallId = this.updates.link(interactionId, toolName);
    if (!toolCallId) {
      const card = this.updates.waitingCard(interactionId, toolName, title, this.updateContext());
      this.send(card.update, cause);
      toolCallId = card.toolCallId;
    }
    return this.updates.permissionCall(toolCallId, toolName, args, this.updateContext());
  }

  private updateContext(): UpdateContext {
    return { client: this.client, snapshot: this.record.hub.snapshot, commandTools: this.services.commandTools, gatedTools: this.services.gatedTools };
  }

  /**
   * Sends a request about an interaction (after the answer to `cause`, when given) and acts on the
   * answer (or on the failure, as an Error), unless the interaction was settled meanwhile (its
   * request is then aborted and the answer ignored).
   */
  private ask<M extends "session/request_permission" | "elicitation/create">(
    interactionId: string,
    method: M,
    params: ServerRequests[M]["params"],
    cause: RequestCause | undefined,
    decide: (answer: unknown) => Promise<void>,
  ): void {
    // A connection that went away answers nothing: the interaction waits for others, or the deadline.
    if (this.client.peer.closed) return;
    const controller = new AbortController();
    this.asking.set(interactionId, controller);
    // An observer's answer is refused: it decides nothing, and the interaction stays pending for the others.
    const heard = (answer: unknown) => this.services.roles.heard(this.sessionId, this.client.peer.principal, answer, method, this.services.log);
    this.client.peer.request(method, params, controller.signal, cause).then(
      async (answer) => {
        const counted = await heard(answer);
        if (counted !== undefined && !controller.signal.aborted) this.resolve(() => decide(counted));
      },
      async (error: unknown) => {
        const counted = await heard(error instanceof Error ? error : new Error(String(error)));
        if (counted !== undefined && !controller.signal.aborted) this.resolve(() => decide(counted));
      },
    ).finally(() => {
      if (this.asking.get(interactionId) === controller) this.asking.delete(interactionId);
    });
  }

  private stopAsking(interactionId: string): void {
    this.asking.get(interactionId)?.abort();
    this.asking.delete(interactionId);
  }

  /** Runs a resolution; one that lost the race with another client's (on any replica, or the deadline) changes nothing. */
  private resolve(action: () => Promise<void>): void {
    action().catch((error: unknown) => {
      if (error instanceof InteractionError) return;
      this.services.log?.("warn", "resolving an interaction failed", { sessionId: this.sessionId, error: String(error) });
    });
  }

  /** Runs `ask` if the interaction is still pending (on any replica) and this connection is not asking about it yet. */
  private ifPending(interactionId: string, ask: () => void): void {
    if (this.asking.has(interactionId)) return;
    this.record.interactions.shared.list().then(
      (pending) => {
        if (pending.some((i) => i.id === interactionId) && !this.asking.has(interactionId)) ask();
      },
      (error: unknown) => this.services.log?.("warn", "listing pending interactions failed", { sessionId: this.sessionId, error: String(error) }),
    );
  }

  // ── Turns ─────────────────────────────────────────────────────────────────

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
 * The session.submit calls of this gateway's prompts, by session and turn id (SessionLink.keyOf), until Tau answers them: a prompt
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

const failed = (error: Error): PermissionChoice => ({ kind: "unusable", reason: `the request failed: ${error.message}` });

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}
