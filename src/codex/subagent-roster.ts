import type { Event } from "../../generated/ask-v1.0.js";
import type { ServerNotifications, ThreadItem } from "../../generated/codex-v2.js";
import type { Snapshot } from "../../generated/tau-v18.js";
import { spawnedBy } from "../bridge/translation/subagent-events.js";
import type { RequestCause } from "../shared/request-cause.js";
import { activityThreadItem, childThreadObject, childTurnId } from "./child-threads.js";
import type { CodexPeer } from "./peer.js";
import { activityItem, endKind, knownAgent, type CollabItem, type KnownAgent } from "./subagent-items.js";

export interface RosterHost {
  readonly threadId: string;
  readonly serverVersion: string;
  snapshot(): Snapshot;
  /** A notification of the parent thread, to every connection that loaded it. */
  emit<M extends keyof ServerNotifications>(method: M, params: ServerNotifications[M]): void;
}

/**
 * The sub-agents of one thread as its Codex clients see them live: the parent's connections are
 * told of each child thread when it starts (`thread/started`), the parent's agent-tool items name
 * their receivers and how each stands, a sub-agent's start follows the spawn item and its end the
 * wait item (`subAgentActivity`), and the connections that loaded a child thread (thread/resume)
 * get its run as a turn: turn/started, an item per activity, turn/completed.
 */
export class SubagentRoster {
  /** Sub-agents seen start, by id, with the spawn call that started them. */
  private readonly live = new Map<string, { toolCallId?: string; runRevision: number; lastSaid?: string }>();
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
        const turn = { id: childTurnId(agentId, runRevision), items: [], status: "inProgress" as const, error: null };
        this.toChild(agentId, "thread/status/changed", { threadId: agentId, status: { type: "active", activeFlags: [] } });
        this.toChild(agentId, "turn/started", { threadId: agentId, turn });
        return;
      }
      case "subagent.activity": {
        const { agentId, runRevision, index, activities } = event.payload;
        const turnId = childTurnId(agentId, runRevision);
        const known = this.live.get(agentId);
        activities.forEach((activity, i) => {
          if (activity.type === "assistant" && known) known.lastSaid = activity.text;
          const item = activityThreadItem(turnId, index + i, activity);
          this.toChild(agentId, "item/started", { threadId: agentId, turnId, item, startedAtMs: Date.now() });
          this.toChild(agentId, "item/completed", { threadId: agentId, turnId, item, completedAtMs: Date.now() });
        });
        return;
      }
      case "subagent.completed": {
        const { agentId, runRevision, status, response, error } = event.payload;
        const turnId = childTurnId(agentId, runRevision);
        if (status === "succeeded" && response !== undefined && this.live.get(agentId)?.lastSaid !== response) {
          const item: ThreadItem = { type: "agentMessage", id: `${turnId}-response`, text: response };
          this.toChild(agentId, "item/started", { threadId: agentId, turnId, item, startedAtMs: Date.now() });
          this.toChild(agentId, "item/completed", { threadId: agentId, turnId, item, completedAtMs: Date.now() });
        }
        this.toChild(agentId, "thread/status/changed", { threadId: agentId, status: { type: "idle" } });
        const codexStatus = status === "succeeded" ? "completed" : status;
        const turnError = status === "failed" ? { message: error ?? "the sub-agent failed", codexErrorInfo: "other" as const } : null;
        this.toChild(agentId, "turn/completed", { threadId: agentId, turn: { id: turnId, items: [], status: codexStatus, error: turnError } });
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

  private toChild<M extends keyof ServerNotifications>(agentId: string, method: M, params: ServerNotifications[M]): void {
    for (const [peer, cause] of this.childPeers.get(agentId) ?? []) {
      if (!peer.closed && !peer.client.optedOut.has(method)) peer.notify(method, params, cause);
    }
  }
}
