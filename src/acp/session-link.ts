import type { StopReason, SessionUpdate } from "../../generated/acp-v1.js";
import type { Event } from "../../generated/ask-v1.0.js";
import { askJoiningClient, RemoteAsking } from "../bridge/interactions/index.js";
import type { SessionRecord } from "../bridge/session-registry.js";
import type { TurnRequests } from "../bridge/submit-or-steer.js";
import type { Log } from "../shared/log.js";
import type { RequestCause } from "../shared/request-cause.js";
import type { AcpClient } from "./client-state.js";
import { EventUpdates, type UpdateContext } from "./event-updates.js";
import { replayHistory } from "./history.js";
import { InteractionRequests } from "./interaction-requests.js";
import { PromptTurns } from "./prompt-turns.js";
import { eventsAfter, indexed, positionMeta, type LogPosition } from "./relay-positions.js";
import type { SessionChoices } from "./session-choices.js";
import type { SessionRoles } from "../bridge/session-roles.js";

/**
 * One ACP connection working with one session (created, loaded or resumed on it): it streams the
 * session's events to the client as `session/update`s, runs the connection's prompt turns
 * (prompt-turns.ts), and puts the session's interactions to the client
 * (interaction-requests.ts, the core's requester for this connection) — approvals and plans as
 * `session/request_permission`, `ask_user` questions as `elicitation/create` — the core deciding
 * who is asked, settling the answers and withdrawing requests (remote-asking.ts, joiner-asking.ts).
 */

export interface SessionLinkServices {
  upstream: TurnRequests;
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

export class SessionLink {
  readonly sessionId: string;
  readonly updates = new EventUpdates();
  private unsubscribe: (() => void) | undefined;
  private readonly turns: PromptTurns;
  private readonly asking: InteractionRequests;
  /** The core's asking of this connection about interactions opened while it is attached. */
  private readonly core: RemoteAsking;

  constructor(
    readonly client: AcpClient,
    readonly record: SessionRecord,
    private readonly services: SessionLinkServices,
  ) {
    this.sessionId = record.sessionId;
    this.turns = new PromptTurns(record, services);
    this.asking = new InteractionRequests(client, record, services, this);
    this.core = new RemoteAsking(this.sessionId, this.asking.requester(), record.interactions.shared, () => true, services.log);
  }

  /** A prompt turn of this connection is running. */
  get prompting(): boolean {
    return this.turns.prompting;
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
    this.turns.rejoinsOn(options.ownPrompts ?? []);
    // A relay resuming after a place in the log gets what followed it first, in the same go as the subscription.
    if (options.after && !this.unsubscribe) {
      const context = this.updateContext();
      const missed = eventsAfter(this.record.hub.log, options.after, (event) => this.updates.translate(event, context)) ?? [];
      for (const { event, skip } of missed) this.onEvent(event, skip);
    }
    this.unsubscribe ??= this.record.hub.log.subscribe((event) => this.onEvent(event));
    // Pending on any replica of the gateway: the core asks the client about them (joiner-asking.ts).
    askJoiningClient(this.record, this.asking.requester(options.cause, true), this.services.log);
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
  prompt(text: string, turnId?: string): Promise<StopReason> {
    return this.turns.prompt(text, turnId);
  }

  /**
   * session/cancel: interrupts the session's running turn, whoever started it (as Codex's
   * turn/interrupt and Ask's session/abort do), and this connection's turn not started yet; this
   * connection's prompt is answered `cancelled`.
   */
  cancel(): Promise<void> {
    return this.turns.cancel();
  }

  /**
   * session/close: cancels this connection's own work only — its prompt's turn, or its prompt not
   * started yet. A turn another client started belongs to the session and runs on for them.
   */
  cancelOwn(): Promise<void> {
    return this.turns.cancelOwn();
  }

  /** The connection's prompt is to be answered `cancelled` however its turn ends (its turn is interrupted by the caller); false when none is open. */
  markCancelled(): boolean {
    return this.turns.markCancelled();
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
    this.asking.withdrawAll();
    this.core.close();
    if (interruptAfterMs !== undefined) await this.turns.letGo(interruptAfterMs);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** An event of the session's log; `skip`: how many of its updates the client has already (a relay resuming). */
  private onEvent(event: Event, skip = 0): void {
    // Its own prompt an editor shows already; other clients' prompts it is told of, live.
    if (event.type === "user.message" && this.turns.ownPrompt(event.payload)) return;
    const updates = this.updates.translate(event, this.updateContext());
    for (const { update, index } of indexed(updates, skip)) this.send(update, undefined, [event.seq, index]);
    switch (event.type) {
      case "turn.started":
      case "turn.completed":
      case "turn.failed":
      case "turn.aborted":
        return this.turns.onTurnEvent(event);
      case "approval.required": {
        const { id } = event.payload;
        return this.ifPending(id, () => this.core.askPermission({ ...event.payload, id }));
      }
      case "input.requested": {
        const { id } = event.payload;
        return this.ifPending(id, () => this.core.askInput({ ...event.payload, id }));
      }
      case "plan.proposed":
        if (!this.asking.isAsking(event.payload.id)) void this.core.askPlan(event.payload);
        return;
      default:
        // A decision made anywhere withdraws the request (remote-asking.ts).
        return this.core.onEvent(event);
    }
  }

  /** Asks if the interaction is still pending (on any replica) and this connection is not asking about it yet. */
  private ifPending(interactionId: string, ask: () => Promise<void>): void {
    if (this.asking.isAsking(interactionId)) return;
    this.record.interactions.shared.list().then(
      (pending) => {
        if (pending.some((i) => i.id === interactionId) && !this.asking.isAsking(interactionId)) void ask();
      },
      (error: unknown) => this.services.log?.("warn", "listing pending interactions failed", { sessionId: this.sessionId, error: String(error) }),
    );
  }

  updateContext(): UpdateContext {
    return { client: this.client, snapshot: this.record.hub.snapshot, commandTools: this.services.commandTools, gatedTools: this.services.gatedTools };
  }
}
