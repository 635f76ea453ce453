import type { Event } from "../../generated/ask-v1.0.js";
import type { AskForApproval, RequestId, ServerNotifications, ServerRequests, Thread, ThreadSettings, ThreadStatus } from "../../generated/codex-v2.js";
import type { Snapshot } from "../../generated/tau-v18.js";
import { firstAnswer, type CommandToolConfig, type ReverseRequester } from "../bridge/interactions/index.js";
import type { SessionRecord } from "../bridge/session-registry.js";
import type { Log } from "../shared/log.js";
import type { RequestCause } from "../shared/request-cause.js";
import type { TauUpstream } from "../tau/upstream.js";
import { approvalModeOf, DEFAULT_APPROVAL_POLICY, policyOf } from "./approval-policy.js";
import { sessionEphemeral } from "../bridge/session-attributes.js";
import { turnsOf, userInputOf } from "./history.js";
import { openTextItem } from "./text-items.js";
import { PlanQuestions } from "./plan-questions.js";
import { SubagentRoster } from "./subagent-roster.js";
import { childThreadObject, childTurn } from "./child-threads.js";
import type { CodexPeer } from "./peer.js";
import type { ToolCatalog } from "./tool-items.js";
import { AT_FIELD, RecentNotifications, type LogPosition } from "./relay-positions.js";
import { TurnTranslator } from "./turn-translator.js";
import type { SessionRoles } from "../bridge/session-roles.js";
import { threadObject, threadRunSettings, threadSettingsOf, type ThreadRunSettings } from "./thread-object.js";

export interface CodexThreadOptions {
  record: SessionRecord;
  /** The bridge connection (interrupts on a `cancel` decision). */
  upstream: Pick<TauUpstream, "request">;
  serverVersion: string;
  commandTools: ReadonlyMap<string, CommandToolConfig>;
  /** How the core asks the thread's connections (server-requests.ts): plans are put to them through it. */
  requesterOf: (thread: CodexThread) => ReverseRequester;
  /** Whose answers to approvals and questions count (an observer's decides nothing). */
  roles: SessionRoles;
  log?: Log;
}

/** A server request sent to one connection, until it is answered or settled otherwise. */
interface OpenServerRequest {
  readonly peer: CodexPeer;
  readonly id: RequestId;
  readonly turnId: string;
}

/** The tools a client registered on the thread (dynamic-tools.ts), as the thread sees them. */
export interface ThreadClientTools {
  /** The connection that registered them; they leave with it. */
  readonly owner: CodexPeer;
  readonly names: ReadonlySet<string>;
  close(): Promise<void>;
}

/**
 * One Tau session as a Codex thread (one session ↔ one thread; its id is the session id), shared
 * by every connection that loaded it: the translator that turns the session's event stream into
 * the thread's notifications, the connections they go to, the thread's approval policy (which
 * sets the session's approval mode), the client's dynamic tools, and the server requests still
 * open, each settled with serverRequest/resolved.
 */
export class CodexThread {
  readonly threadId: string;
  readonly record: SessionRecord;
  /**
   * The connections that loaded the thread, each with the request of its own that what the thread
   * sends it follows (the last turn/start, turn/interrupt or thread/start it sent): a turn's
   * notifications and server requests reach a client after the response that named the turn.
   */
  private readonly peers = new Map<CodexPeer, RequestCause | undefined>();
  private readonly translator: TurnTranslator;
  private readonly openRequests = new Set<OpenServerRequest>();
  private policy: AskForApproval = DEFAULT_APPROVAL_POLICY;
  private dynamic: ThreadClientTools | undefined;
  /**
   * The turn an interrupt was asked for: the server requests it cancels stay open until its
   * turn/completed, and are settled after it, as Codex orders them.
   */
  private interruptedTurn: string | undefined;
  private readonly plans: PlanQuestions;
  /** The thread's sub-agents and their child threads (subagent-roster.ts). */
  readonly subagents: SubagentRoster;
  /** The event being translated, and how many notifications it made so far: their place in the log, for relays. */
  private current: { seq: number; index: number } | undefined;
  private readonly recent = new RecentNotifications();
  /** The place of the last notification sent (placeNow). */
  private lastAt: LogPosition | undefined;

  constructor(private readonly options: CodexThreadOptions) {
    this.record = options.record;
    this.threadId = options.record.sessionId;
    const hub = this.record.hub;
    this.subagents = new SubagentRoster({
      threadId: this.threadId,
      serverVersion: options.serverVersion,
      snapshot: () => this.snapshot,
      emit: (method, params) => this.emit(method, params),
      peers: () => this.peers,
    });
    this.translator = new TurnTranslator({
      threadId: this.threadId,
      cwd: () => this.snapshot.executionEnvironment.cwd,
      catalog: () => this.catalog,
      userInput: (turnId) => userInputOf(this.snapshot, turnId),
      contextWindow: () => this.snapshot.bootstrap.model.contextWindow,
      mayAsk: (toolName) => this.options.commandTools.has(toolName) && this.record.interactions.mayAsk(toolName),
      emit: (method, params) => this.emit(method, params),
      subagents: this.subagents,
      turnEnded: (turnId) => {
        this.settleRequests((r) => r.turnId === turnId);
        if (this.interruptedTurn === turnId) this.interruptedTurn = undefined;
      },
    });
    this.plans = new PlanQuestions({
      threadId: this.threadId,
      interactions: this.record.interactions,
      requester: options.requesterOf(this),
      log: this.options.log,
    });
    const running = hub.activeTurnId;
    if (running) this.catchUpOn(running);
    // From now on, for the thread's whole life: its state must stay current even while no connection has it loaded.
    hub.log.subscribe((event) => this.onEvent(event));
    let reported = JSON.stringify(this.threadSettings());
    this.record.interactions.onModeChange(() => {
      this.translator.gatingChanged();
      // Another client (of any dialect, on any replica) or this thread's own turn/start changed the
      // session's mode: the connections that loaded the thread learn the policy (and collaboration
      // mode) it stands for now.
      const threadSettings = this.threadSettings();
      if (JSON.stringify(threadSettings) === reported) return;
      reported = JSON.stringify(threadSettings);
      this.emit("thread/settings/updated", { threadId: this.threadId, threadSettings });
    });
  }

  /**
   * A turn already running when the thread is made: the translator goes through what the session's
   * log holds of it, so the thread knows the turn's tool items and the approvals and questions it
   * waits on, as if it had been loaded all along (a client resuming it is told `waitingOnApproval`
   * and asked). The text streamed so far is left out: a resuming client has it in the thread's
   * history, and the message being streamed goes on in the item that history gives it (its text so
   * far as the session has it). No connection has the thread loaded yet, so nothing is sent. A turn
   * whose start the log no longer holds is only known from now on.
   */
  private catchUpOn(turnId: string): void {
    const { log } = this.record.hub;
    const { events } = log.read(Math.max(0, log.oldestSeq - 1));
    const startsIt = (event: Event) => event.type === "turn.started" && event.payload.turnId === turnId;
    let start = events.length - 1;
    while (start >= 0 && !startsIt(events[start]!)) start--;
    for (const event of start < 0 ? [] : events.slice(start)) {
      if (event.type !== "model.streaming" && event.type !== "model.thinking") this.translator.event(event);
    }
    this.translator.adoptRunningTurn(turnId, openTextItem(this.snapshot, turnId));
  }

  /** Made by thread/start with `ephemeral: true`: listed to nobody, not resumable, closed when its last client leaves. */
  get ephemeral(): boolean {
    return sessionEphemeral(this.snapshot);
  }

  get snapshot(): Snapshot {
    return this.record.hub.snapshot!;
  }

  get currentTurnId(): string | undefined {
    return this.translator.currentTurnId;
  }

  get status(): ThreadStatus {
    return this.translator.status;
  }

  /** The session's approval mode as Codex's policy (a mode set by another client, or at creation by one of another dialect, included). */
  get approvalPolicy(): AskForApproval {
    return policyOf(this.record.interactions.mode, this.policy);
  }

  /** The policy of thread/start: the mode it stands for is the one recorded on the Tau session at its creation. */
  createdWith(policy: AskForApproval): void {
    this.policy = policy;
  }

  /** The client's approval policy, which decides whether the gateway's command tools ask (from the next call on, on every replica, once this resolves). */
  async setApprovalPolicy(policy: AskForApproval): Promise<void> {
    this.policy = policy;
    await this.record.interactions.setMode(approvalModeOf(policy));
  }

  get catalog(): ToolCatalog {
    return { commandTools: this.options.commandTools, dynamicTools: this.dynamic?.names ?? new Set(), threadId: this.threadId };
  }

  /** The client's dynamic tools (replacing earlier ones, which are closed). */
  useDynamicTools(tools: ThreadClientTools | undefined): void {
    void this.dynamic?.close();
    this.dynamic = tools;
  }

  get dynamicTools(): ThreadClientTools | undefined {
    return this.dynamic;
  }

  get translatorState(): TurnTranslator {
    return this.translator;
  }

  isLoadedBy(peer: CodexPeer): boolean {
    return this.peers.has(peer);
  }

  get loaded(): boolean {
    return [...this.peers.keys()].some((p) => !p.closed);
  }

  /**
   * The place in the log of the last notification the thread sent ([0, 0]: none yet): a relay's
   * connection that loads the thread is told it (relay-positions.ts), so that a cut before any
   * notification of the thread reached it still resumes from there rather than live.
   */
  placeNow(): LogPosition {
    return this.lastAt ?? [0, 0];
  }

  /** The connection loaded the thread; with `cause`, what the thread sends it from now on is caused by that request of its. */
  attach(peer: CodexPeer, cause?: RequestCause): void {
    this.peers.set(peer, cause ?? this.peers.get(peer));
    if (peer.client.relayed) this.recent.keep();
  }

  /**
   * A relay's connection made again resumes where its client was (relay-positions.ts): what the
   * thread sent after `after` again, after `cause`'s response, then the live ones. False when that
   * is no longer kept (the client then has the thread's turns from thread/resume).
   */
  resumeAfter(peer: CodexPeer, after: LogPosition, cause?: RequestCause): boolean {
    const missed = this.recent.after(after);
    if (!missed) return false;
    for (const { at, method, params } of missed) {
      if (!peer.client.optedOut.has(method)) peer.notify(method as keyof ServerNotifications, { ...params, [AT_FIELD]: at } as never, cause);
    }
    return true;
  }

  /** What the thread sends a connection that loaded it is caused by `cause` (that connection's request) from now on. */
  causedBy(peer: CodexPeer, cause: RequestCause | undefined): void {
    if (this.peers.has(peer) && cause) this.peers.set(peer, cause);
  }

  /** The connection went away: its open requests are forgotten, and its dynamic tools leave with it. */
  detach(peer: CodexPeer): void {
    this.peers.delete(peer);
    this.subagents.detach(peer);
    for (const request of [...this.openRequests]) if (request.peer === peer) this.openRequests.delete(request);
    if (this.dynamic?.owner === peer) this.useDynamicTools(undefined);
  }

  /**
   * The status thread/list and thread/read report: the live one while a connection here has the
   * thread loaded or a turn of it runs, whoever runs it (another Codex connection, a client of
   * another dialect), as the app-server reports a thread it runs; otherwise notLoaded.
   */
  get reportedStatus(): ThreadStatus {
    return this.loaded || this.currentTurnId !== undefined ? this.status : { type: "notLoaded" };
  }

  /** The Codex thread object; turns only when asked for. */
  thread(includeTurns: boolean, status: ThreadStatus = this.reportedStatus): Thread {
    return threadObject(this.snapshot, this.options.serverVersion, status, includeTurns ? this.turns() : []);
  }

  /** The child thread of one of the session's sub-agents (child-threads.ts); its run as a turn only when asked for. */
  childThread(agentId: string, includeTurns: boolean): Thread | undefined {
    const snapshot = this.snapshot;
    const agent = snapshot.agents[agentId];
    if (!agent) return undefined;
    const turns = includeTurns ? [childTurn(snapshot, agent, this.record.hub.subagentActivities?.agents[agentId])] : [];
    return childThreadObject(snapshot, agent, this.options.serverVersion, turns);
  }

  /**
   * The thread's turns read from the snapshot, the item being streamed holding what its deltas
   * have carried so far: the rest reaches a connection that loads the thread now as deltas of that
   * item, so what it is given and what follows join up exactly (with a shared store the snapshot
   * may run a little ahead of the session's events). Text the events never carried (lost to a
   * resync) leaves the snapshot's version standing.
   */
  private turns(): Thread["turns"] {
    const turns = turnsOf(this.snapshot, this.catalog);
    const streaming = this.translator.streamingItem;
    const item = streaming && turns.find((t) => t.id === streaming.turnId)?.items.find((i) => i.id === streaming.id);
    if (item?.type === "agentMessage" && item.text.startsWith(streaming!.text)) item.text = streaming!.text;
    else if (item?.type === "reasoning" && (item.summary ?? []).join("").startsWith(streaming!.text)) item.summary = [streaming!.text];
    return turns;
  }

  /** What thread/start and thread/resume report about how the thread runs. */
  settings(): ThreadRunSettings {
    return threadRunSettings(this.snapshot, this.approvalPolicy);
  }

  /** The thread's settings as thread/settings/updated carries them (the same facts as settings()). */
  threadSettings(): ThreadSettings {
    return threadSettingsOf(this.settings(), this.record.interactions.mode === "plan");
  }

  /** Sends a notification of the thread to every connection that loaded it and did not opt out. */
  emit<M extends keyof ServerNotifications>(method: M, params: ServerNotifications[M]): void {
    const at: LogPosition | undefined = this.current && [this.current.seq, this.current.index++];
    if (at) {
      this.recent.record(at, method, params);
      this.lastAt = at;
    }
    for (const [peer, cause] of this.peers) {
      if (peer.closed || peer.client.optedOut.has(method)) continue;
      // A relay's connection is told each notification's place in the log (relay-positions.ts).
      peer.notify(method, at && peer.client.relayed ? { ...params, [AT_FIELD]: at } : params, cause);
    }
  }

  /**
   * Asks the connections that loaded the thread (`accepts`), in the current turn; resolves with the first answer (a failure as `onError`,
   * a closed connection as none; a decision only from who may answer, as `count` hears it: a vote leaves the others asked), or undefined
   * when nobody can be asked or all left. Each asked hears serverRequest/resolved once settled (answered, `signal` aborted, the turn ended),
   * except for an answered item/tool/call, which Codex does not follow with one (the client ran the tool; its result is its own).
   */
  async ask<M extends keyof ServerRequests>(
    method: M,
    params: (turnId: string) => ServerRequests[M]["params"],
    signal: AbortSignal,
    accepts: (peer: CodexPeer) => boolean | Promise<boolean> = () => true,
    onError: (error: unknown) => unknown = () => undefined,
    count: (reply: unknown, peer: CodexPeer) => unknown = (reply) => reply,
  ): Promise<unknown> {
    const turnId = this.currentTurnId;
    const loaded = [...this.peers.keys()].filter((p) => !p.closed);
    const chosen = await Promise.all(loaded.map(accepts));
    const peers = loaded.filter((p, i) => chosen[i] && !p.closed);
    if (turnId === undefined || turnId !== this.currentTurnId || peers.length === 0 || signal.aborted) return undefined;
    const answers = peers.map((peer) => {
      const { id, answer } = peer.request(method, params(turnId), signal, this.peers.get(peer));
      const open: OpenServerRequest = { peer, id, turnId };
      this.openRequests.add(open);
      const settle = () => this.settleRequests((r) => r === open);
      // Cancelled by an interrupt of its turn: settled once the turn has completed (turnEnded).
      const settleCancelled = () => {
        if (this.interruptedTurn !== turnId) settle();
      };
      signal.addEventListener("abort", settleCancelled, { once: true });
      const heard = async (reply: unknown) => (method === "item/tool/call" ? reply : count(await this.options.roles.heard(this.threadId, peer.principal, reply, method, this.options.log), peer));
      return answer.then(
        (value) => {
          if (method === "item/tool/call") this.openRequests.delete(open);
          else settle();
          return heard(value);
        },
        (error: unknown) => {
          if (signal.aborted) {
            settleCancelled();
            return undefined;
          }
          settle();
          // A connection that went away answered nothing: the others, or the deadline, decide.
          return peer.closed ? undefined : heard(onError(error));
        },
      );
    });
    return firstAnswer(answers);
  }

  /** An interrupt of `turnId` is under way (turn/interrupt). */
  interrupting(turnId: string): void {
    this.interruptedTurn = turnId;
  }

  /** Interrupts the running turn (a `cancel` decision); failures are logged, the decision stands. */
  interrupt(): void {
    if (this.currentTurnId !== undefined) this.interrupting(this.currentTurnId);
    this.options.upstream.request("session.interrupt", { sessionId: this.threadId }).catch((error: unknown) =>
      this.options.log?.("warn", "session.interrupt after a cancel decision failed", { threadId: this.threadId, error: String(error) }),
    );
  }

  private settleRequests(which: (request: OpenServerRequest) => boolean): void {
    for (const request of [...this.openRequests]) {
      if (!which(request)) continue;
      this.openRequests.delete(request);
      if (!request.peer.closed) request.peer.notify("serverRequest/resolved", { threadId: this.threadId, requestId: request.id }, this.peers.get(request.peer));
    }
  }

  private onEvent(event: Event): void {
    this.current = { seq: event.seq, index: 0 };
    try {
      this.subagents.onEvent(event);
      this.translator.event(event);
      this.plans.onEvent(event);
    } finally {
      this.current = undefined;
    }
  }
}
