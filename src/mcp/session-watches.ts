import type { Event } from "../../generated/ask-v1.0.js";
import { askJoiningClient, RemoteAsking, type ReverseRequester } from "../bridge/interactions/index.js";
import type { SessionRecord } from "../bridge/session-registry.js";
import { offeredTo } from "../bridge/decision-offers.js";
import type { SessionRoles } from "../bridge/session-roles.js";
import type { Log } from "../shared/log.js";
import type { McpClient } from "./client-state.js";
import { PendingDecisions } from "./pending-decisions.js";
import { sessionLogMessage } from "./session-log.js";
import { sessionUri } from "../shared/session-references.js";

/**
 * Which MCP connections work with which sessions: a connection watches a session once it started
 * or continued it (tau, tau-reply) or subscribed to its transcript. A watching connection that can
 * show forms is asked about the session's approvals and questions as they open (elicitations.ts,
 * among the core's reverse requesters), about its plans as they are proposed, and, when the watch
 * begins, about what the session already waits for — both through the core's asking
 * (remote-asking.ts, joiner-asking.ts), as every dialect's clients are; a subscribed one is told each
 * time the transcript changes. A connection that goes away stops watching and decides nothing.
 * Each watch follows what its session waits for: while any session a connection watches waits for
 * a decision its principal may give, tau-answer is one of its tools (the connection is told when
 * that changes: as the session's decisions open and settle, and as roles are granted or revoked in
 * it, through any replica), and the session's failures, warnings and votes are its log messages.
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
  /** Stops listening for the session's role changes (once listening). */
  private stopRoles: (() => void) | undefined;
  private closed = false;
  /** The core's asking of this connection about plans proposed while it watches. */
  private readonly asking: RemoteAsking;
  /** Messages whose streamed text already announced a change. */
  private readonly streaming = new Set<string>();
  /** What the session waits for. */
  readonly decisions = new PendingDecisions();

  constructor(
    readonly client: McpClient,
    readonly record: SessionRecord,
    /** This connection alone, as the core asks it (elicitations.ts). */
    requester: ReverseRequester,
    roles: Pick<SessionRoles, "onChange">,
    log: Log | undefined,
    /** Whether the session waits for a decision changed, or who may give it did: the connection's tools are weighed again. */
    private readonly waitingChanged: () => void,
  ) {
    this.uri = sessionUri(record.sessionId);
    const { shared } = record.interactions;
    this.asking = new RemoteAsking(record.sessionId, requester, shared, () => true, log);
    this.unsubscribe = record.hub.log.subscribe((event) => this.onEvent(event));
    // A role granted or revoked (here or on another replica) changes what the connection's principal may answer: only while the session waits does that change its tools.
    roles.onChange(record.sessionId, () => this.decisions.waiting && this.waitingChanged()).then(
      (stop) => (this.closed ? stop() : (this.stopRoles = stop)),
      (error: unknown) => log?.("warn", "listening for the session's role changes failed", { sessionId: record.sessionId, error: String(error) }),
    );
    // What the session waited for before this connection came is put to it (a plan proposed from now on is asked by onEvent).
    askJoiningClient(record, requester, log);
    Promise.all([shared.list(), shared.plans()]).then(
      ([records, plans]) => {
        if (this.decisions.known([...records.map((r) => r.id), ...plans.map((p) => p.id)])) this.waitingChanged();
      },
      (error: unknown) => log?.("warn", "listing pending interactions failed", { sessionId: record.sessionId, error: String(error) }),
    );
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.stopRoles?.();
    this.asking.close();
  }

  private onEvent(event: Event): void {
    if (this.decisions.onEvent(event)) this.waitingChanged();
    const logged = sessionLogMessage(this.record.sessionId, event);
    if (logged) this.client.log(logged.level, "tau-session", logged.data);
    if (this.subscribed && this.changesTranscript(event)) this.client.peer.notify("notifications/resources/updated", { uri: this.uri });
    // A plan reaches no reverse requester as it is proposed: each dialect's clients are asked about it through the core (as Codex's plan-questions.ts, ACP's session-link.ts).
    if (event.type === "plan.proposed") void this.asking.askPlan(event.payload);
    // A decision made anywhere withdraws the form.
    else this.asking.onEvent(event);
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
}

export class SessionWatches {
  private readonly byClient = new Map<McpClient, Map<string, Watch>>();

  constructor(
    /** One connection as the core asks it (McpElicitations.of). */
    private readonly requesterOf: (client: McpClient) => ReverseRequester,
    /** The sessions' roles: whether the client's principal may decide what a session waits for (an observer may not), and when that may have changed. */
    private readonly roles: Pick<SessionRoles, "mayDecideOn" | "onChange">,
    private readonly log?: Log,
  ) {}

  /** The client watches the session from now on (a second call changes nothing). */
  watch(client: McpClient, record: SessionRecord): Watch {
    let ofClient = this.byClient.get(client);
    if (!ofClient) this.byClient.set(client, (ofClient = new Map()));
    let watch = ofClient.get(record.sessionId);
    if (!watch) ofClient.set(record.sessionId, (watch = new Watch(client, record, this.requesterOf(client), this.roles, this.log, () => this.announceTools(client))));
    return watch;
  }

  /**
   * Whether a session the client watches waits for a decision its principal may give (tau-answer is
   * then one of its tools): an observer is not offered a tool whose every call would be refused, nor
   * a controller a policy rule does not name among an approval's deciders. The one question every
   * dialect's offer asks (decision-offers.ts); roles that cannot be read offer nothing, as an answer
   * then would count for nothing.
   */
  async answerable(client: McpClient): Promise<boolean> {
    for (const watch of this.byClient.get(client)?.values() ?? []) {
      for (const id of watch.decisions.ids()) if (await offeredTo(this.roles, watch.record.sessionId, client.peer.principal, id)) return true;
    }
    return false;
  }

  /** The client's tools changed when tau-answer comes or goes: it is told to list them again. */
  private announceTools(client: McpClient): void {
    void this.answerable(client).then((offered) => {
      if (offered === client.answerOffered) return;
      client.answerOffered = offered;
      if (client.initialized && !client.peer.closed) client.peer.notify("notifications/tools/list_changed", {});
    });
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
