import type { Event } from "../../generated/ask-v1.0.js";
import { offeredTo } from "../bridge/decision-offers.js";
import { InteractionError } from "../bridge/interactions/index.js";
import type { SessionRecord } from "../bridge/session-registry.js";
import type { SessionRoles } from "../bridge/session-roles.js";
import type { Log } from "../shared/log.js";
import type { McpClient } from "./client-state.js";
import { formChoice, planForm } from "./forms.js";
import { PendingDecisions } from "./pending-decisions.js";
import { sessionLogMessage } from "./session-log.js";
import { sessionMeta, sessionUri } from "../shared/session-references.js";

/**
 * Which MCP connections work with which sessions: a connection watches a session once it started
 * or continued it (tau, tau-reply) or subscribed to its transcript. A watching connection that can
 * show forms is asked about the session's approvals, questions (elicitations.ts) and plans (here,
 * from the session's events, as plans reach no reverse requester) when its principal may decide
 * them (decision-offers.ts; an answer from one made observer since counts for nothing, as in every
 * dialect); a subscribed one is told each
 * time the transcript changes. A connection that goes away stops watching and decides nothing.
 * Each watch follows what its session waits for: while any session a connection watches waits for
 * a decision, tau-answer is one of its tools (the connection is told when that changes), and the
 * session's failures and warnings are its log messages.
 */

/** Events after which the transcript reads differently; streamed text only at its first chunk per message. */
const TRANSCRIPT_EVENTS: ReadonlySet<Event["type"]> = new Set([
  "user.message",
  "turn.started",
  "turn.completed",
  "turn.failed",
  "turn.aborted",
  "tool.use",
  "tool.result",
  "session.reset",
  "compaction.completed",
]);

class Watch {
  subscribed = false;
  readonly uri: string;
  private readonly unsubscribe: () => void;
  /** Plans put to the client, by interaction id: aborted once settled. */
  private readonly asking = new Map<string, AbortController>();
  /** Messages whose streamed text already announced a change. */
  private readonly streaming = new Set<string>();
  /** What the session waits for. */
  readonly decisions = new PendingDecisions();

  constructor(
    readonly client: McpClient,
    readonly record: SessionRecord,
    private readonly roles: Pick<SessionRoles, "heard" | "mayDecide">,
    private readonly log: Log | undefined,
    /** Whether the session waits for a decision changed. */
    private readonly waitingChanged: () => void,
  ) {
    this.uri = sessionUri(record.sessionId);
    this.unsubscribe = record.hub.log.subscribe((event) => this.onEvent(event));
    const { shared } = record.interactions;
    // What the session waited for before this connection came; a plan then proposed is put to it too.
    Promise.all([shared.list(), shared.plans()]).then(
      ([records, plans]) => {
        plans.forEach(({ id, plan }) => this.askPlan(id, plan));
        if (this.decisions.known([...records.map((r) => r.id), ...plans.map((p) => p.id)])) this.waitingChanged();
      },
      (error: unknown) => log?.("warn", "listing pending interactions failed", { sessionId: record.sessionId, error: String(error) }),
    );
  }

  close(): void {
    this.unsubscribe();
    for (const controller of this.asking.values()) controller.abort();
    this.asking.clear();
  }

  private onEvent(event: Event): void {
    if (this.decisions.onEvent(event)) this.waitingChanged();
    const logged = sessionLogMessage(this.record.sessionId, event);
    if (logged) this.client.log(logged.level, "tau-session", logged.data);
    if (this.subscribed && this.changesTranscript(event)) this.client.peer.notify("notifications/resources/updated", { uri: this.uri });
    if (event.type === "plan.proposed") this.askPlan(event.payload.id, event.payload.plan);
    else if ((event.type === "plan.approved" || event.type === "plan.rejected") && event.payload.id) this.stopAsking(event.payload.id);
  }

  private changesTranscript(event: Event): boolean {
    if (event.type === "model.streaming") {
      const key = event.payload.messageId ?? "";
      if (this.streaming.has(key)) return false;
      this.streaming.add(key);
      return true;
    }
    return TRANSCRIPT_EVENTS.has(event.type);
  }

  /** A proposed plan, as a form to a client that can show one; the first decision of any client wins. */
  private askPlan(interactionId: string, plan: string): void {
    if (this.asking.has(interactionId) || !this.client.canElicit) return;
    const controller = new AbortController();
    this.asking.set(interactionId, controller);
    const { sessionId } = this.record;
    const { principal } = this.client.peer;
    void offeredTo(this.roles, sessionId, principal, interactionId).then((offered) => {
      if (offered && !controller.signal.aborted && !this.client.peer.closed) this.putPlan(interactionId, plan, controller);
      else if (this.asking.get(interactionId) === controller) this.asking.delete(interactionId);
    });
  }

  /** The plan's form, and the client's answer as the plan's decision once it may count. */
  private putPlan(interactionId: string, plan: string, controller: AbortController): void {
    const { sessionId } = this.record;
    const shared = this.record.interactions.shared;
    const decide = async (reply: unknown) => {
      const answer = controller.signal.aborted ? undefined : await this.roles.heard(sessionId, this.client.peer.principal, reply, "elicitation/create", this.log);
      if (answer === undefined || controller.signal.aborted) return;
      const choice = formChoice(answer);
      const decision = choice.kind === "approve" ? ({ action: "approve" } as const) : { action: "reject" as const, ...(choice.kind === "reject" ? { feedback: choice.feedback } : {}) };
      shared.decidePlan(interactionId, decision).catch((error: unknown) => {
        // Another client decided first (on any replica): nothing to do.
        if (!(error instanceof InteractionError)) this.log?.("warn", "deciding a plan failed", { sessionId, error: String(error) });
      });
    };
    this.client.peer
      .request("elicitation/create", { ...planForm(sessionId, plan), _meta: sessionMeta(sessionId) }, controller.signal, this.client.callIn(sessionId))
      .then(decide, (error: unknown) => decide(error instanceof Error ? error : new Error(String(error))))
      .finally(() => {
        if (this.asking.get(interactionId) === controller) this.asking.delete(interactionId);
      });
  }

  private stopAsking(interactionId: string): void {
    this.asking.get(interactionId)?.abort();
    this.asking.delete(interactionId);
  }
}

export class SessionWatches {
  private readonly byClient = new Map<McpClient, Map<string, Watch>>();

  constructor(
    private readonly roles: Pick<SessionRoles, "heard" | "mayDecide">,
    private readonly log?: Log,
  ) {}

  /** The client watches the session from now on (a second call changes nothing). */
  watch(client: McpClient, record: SessionRecord): Watch {
    let ofClient = this.byClient.get(client);
    if (!ofClient) this.byClient.set(client, (ofClient = new Map()));
    let watch = ofClient.get(record.sessionId);
    if (!watch) ofClient.set(record.sessionId, (watch = new Watch(client, record, this.roles, this.log, () => this.announceTools(client))));
    return watch;
  }

  /** Whether a session the client watches waits for a decision (tau-answer is then one of its tools). */
  waiting(client: McpClient): boolean {
    for (const watch of this.byClient.get(client)?.values() ?? []) if (watch.decisions.waiting) return true;
    return false;
  }

  /** The client's tools changed when tau-answer comes or goes: it is told to list them again. */
  private announceTools(client: McpClient): void {
    const offered = this.waiting(client);
    if (offered === client.answerOffered) return;
    client.answerOffered = offered;
    if (client.initialized && !client.peer.closed) client.peer.notify("notifications/tools/list_changed", {});
  }

  /** The client's watch of the session, if it has one. */
  get(client: McpClient, sessionId: string): Watch | undefined {
    return this.byClient.get(client)?.get(sessionId);
  }

  /** The connections watching the session that can be asked (they can show forms). */
  askable(sessionId: string): McpClient[] {
    const clients: McpClient[] = [];
    for (const [client, watches] of this.byClient) if (watches.has(sessionId) && client.canElicit) clients.push(client);
    return clients;
  }

  /** The client is gone: it watches nothing any more. */
  closeClient(client: McpClient): void {
    for (const watch of this.byClient.get(client)?.values() ?? []) watch.close();
    this.byClient.delete(client);
  }

  closeAll(): void {
    for (const client of [...this.byClient.keys()]) this.closeClient(client);
  }
}

export type { Watch };
