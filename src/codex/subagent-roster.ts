import type { Event } from "../../generated/ask-v1.0.js";
import type { ServerNotifications, ThreadItem } from "../../generated/codex-v2.js";
import type { Snapshot } from "../../generated/tau-v18.js";
import { spawnedBy } from "../bridge/translation/subagent-events.js";
import type { RequestCause } from "../shared/request-cause.js";
import { activityThreadItem, childThreadObject, childTurnId, endedChildTurn, responseItem, startedChildTurn } from "./child-threads.js";
import type { CodexPeer } from "./peer.js";

type AgentMessageItem = Extract<ThreadItem, { type: "agentMessage" }>;
import { activityItem, endKind, knownAgent, type CollabItem, type KnownAgent } from "./subagent-items.js";

export interface RosterHost {
  readonly threadId: string;
  readonly serverVersion: string;
  snapshot(): Snapshot;
  /** A notification of the parent thread, to every connection that loaded it. */
  emit<M extends keyof ServerNotifications>(method: M, params: ServerNotifications[M]): void;
  /** The connections that loaded the parent thread, each with the cause what the thread sends it follows. */
  peers(): ReadonlyMap<CodexPeer, RequestCause | undefined>;
}

/**
 * The sub-agents of one thread as its Codex clients see them live: the parent's connections are
 * told of each child thread when it starts (`thread/started`), the parent's agent-tool items name
 * their receivers and how each stands, a sub-agent's start follows the spawn item and its end the
 * wait item (`subAgentActivity`), and a child thread's run reaches, as a turn of that thread
 * (turn/started, an item per activity, turn/completed), both the connections that loaded the
 * child (thread/resume) and those that loaded the parent: the Codex app-server subscribes a
 * parent's connections to the threads it spawns, and the terminal UI previews a running
 * sub-agent (`/subagents`: "Sub-agents running") from the child's notifications it received
 * without ever loading it.
 */
export class SubagentRoster {
  /** Sub-agents seen start, by id, with the spawn call that started them. */
  private readonly live = new Map<string, { toolCallId?: string; runRevision: number; lastSaid?: AgentMessageItem }>();
  private readonly told = new Set<string>();
  private readonly childPeers = new Map<string, Map<CodexPeer, RequestCause | undefined>>();

  constructor(private readonly host: RosterHost) {}

  onEvent(event: Event): void {
    switch (event.type) {
      case "subagent.started": {
        const { agentId, runRevision, toolCallId } = event.payload;
        this.live.set(agentId, { runRevision, ...(toolCallId === undefined ? {} : { toolCallId }) });
        const agent = this.host.snapshot().agents[agentId];
        if (agent) this.host.emit("thread/started", { thread: childThreadObject(this.host.snapshot(), agent, this.host.serverVersion, []) });
        const turn = startedChildTurn(agentId, runRevision, agent);
        this.toChild(agentId, "thread/status/changed", { threadId: agentId, status: { type: "active", activeFlags: [] } });
        this.toChild(agentId, "turn/started", { threadId: agentId, turn });
        return;
      }
      case "subagent.activity": {
        const { agentId, runRevision, index, activities } = event.payload;
        const turnId = childTurnId(agentId, runRevision);
        const known = this.live.get(agentId);
        activities.forEach((activity, i) => {
          const item = activityThreadItem(turnId, index + i, activity);
          if (activity.type === "assistant" && item.type === "agentMessage" && known) known.lastSaid = item;
          this.toChild(agentId, "item/started", { threadId: agentId, turnId, item, startedAtMs: Date.now() });
          this.toChild(agentId, "item/completed", { threadId: agentId, turnId, item, completedAtMs: Date.now() });
        });
        return;
      }
      case "subagent.completed": {
        const { agentId, runRevision, status, response, error } = event.payload;
        const turnId = childTurnId(agentId, runRevision);
        let lastMessage = this.live.get(agentId)?.lastSaid;
        if (status === "succeeded" && response !== undefined) {
          if (lastMessage?.text === response) {
            // It said its answer last: announced as commentary then (nobody knew), the summary names it the answer, as thread/read does.
            lastMessage = { ...lastMessage, phase: "final_answer" };
          } else {
            lastMessage = responseItem(turnId, response);
            this.toChild(agentId, "item/started", { threadId: agentId, turnId, item: lastMessage, startedAtMs: Date.now() });
            this.toChild(agentId, "item/completed", { threadId: agentId, turnId, item: lastMessage, completedAtMs: Date.now() });
          }
        }
        this.toChild(agentId, "thread/status/changed", { threadId: agentId, status: { type: "idle" } });
        const codexStatus = status === "succeeded" ? "completed" : status;
        const turnError = status === "failed" ? { message: error ?? "the sub-agent failed", codexErrorInfo: "other" as const } : null;
        const turn = endedChildTurn(agentId, runRevision, this.host.snapshot().agents[agentId], { status: codexStatus, error: turnError, ...(lastMessage ? { lastMessage } : {}) });
        this.toChild(agentId, "turn/completed", { threadId: agentId, turn });
        return;
      }
      default:
        return;
    }
  }

  /** The sub-agents an agent-tool item deals with, as they stand now: those it names, or those the spawn call started. */
  agentsOf(item: CollabItem): KnownAgent[] {
    const snapshot = this.host.snapshot();
    let ids = item.receiverThreadIds;
    if (ids.length === 0 && item.tool === "spawnAgent") {
      ids = Object.keys(snapshot.agents).filter((id) => this.live.get(id)?.toolCallId === item.id || spawnedBy(snapshot, id) === item.id);
    }
    return ids.flatMap((id) => (snapshot.agents[id] ? [knownAgent(snapshot.agents[id]!, this.live.get(id)?.toolCallId)] : []));
  }

  /** The sub-agent activity items that follow a completed agent-tool item: starts after a spawn, ends after a wait. Each once. */
  itemsAfter(item: CollabItem): ThreadItem[] {
    const agents = this.agentsOf(item);
    const due =
      item.tool === "spawnAgent"
        ? agents.map((agent) => activityItem(agent, "started"))
        : item.tool === "wait"
          ? agents.filter((a) => a.status !== "running").map((agent) => activityItem(agent, endKind(agent)))
          : [];
    return due.filter((activity) => !this.told.has(activity.id) && this.told.add(activity.id));
  }

  /** The connection loaded the child thread: its run's notifications go there from now on. */
  attachChild(agentId: string, peer: CodexPeer, cause: RequestCause | undefined): void {
    let peers = this.childPeers.get(agentId);
    if (!peers) this.childPeers.set(agentId, (peers = new Map()));
    peers.set(peer, cause ?? peers.get(peer));
  }

  isChildLoadedBy(agentId: string, peer: CodexPeer): boolean {
    return this.childPeers.get(agentId)?.has(peer) ?? false;
  }

  detach(peer: CodexPeer): void {
    for (const peers of this.childPeers.values()) peers.delete(peer);
  }

  /** A notification of a child thread, once to each connection that loaded the child or the parent (the child's own cause first). */
  private toChild<M extends keyof ServerNotifications>(agentId: string, method: M, params: ServerNotifications[M]): void {
    const peers = new Map(this.host.peers());
    for (const [peer, cause] of this.childPeers.get(agentId) ?? []) peers.set(peer, cause ?? peers.get(peer));
    for (const [peer, cause] of peers) {
      if (!peer.closed && !peer.client.optedOut.has(method)) peer.notify(method, params, cause);
    }
  }
}
