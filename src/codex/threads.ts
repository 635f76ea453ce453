import type { BridgeCore } from "../bridge/bridge-core.js";
import type { CommandToolConfig } from "../bridge/interactions/index.js";
import { CodexServerRequests } from "./server-requests.js";
import { SessionError } from "../bridge/session-error.js";
import { closeSession } from "../bridge/session-close.js";
import { namesNoSession } from "../bridge/hosts/host-router.js";
import type { Log } from "../shared/log.js";
import { TauResponseError } from "../tau/upstream.js";
import { findChild } from "./child-threads.js";
import { threadNotFound } from "./codex-errors.js";
import type { CodexPeer } from "./peer.js";
import { CodexThread } from "./thread.js";

export interface CodexThreadsOptions {
  core: BridgeCore;
  serverVersion: string;
  log?: Log;
}

/** Tau's answers that mean "no such session" for an id a client made up. */
const UNKNOWN_SESSION = new Set(["not_found", "invalid_params", "invalid_request"]);

/** The Codex threads of the gateway: one per Tau session a Codex client touched, made on first use. */
export class CodexThreads {
  private readonly threads = new Map<string, CodexThread>();
  private readonly commandTools: ReadonlyMap<string, CommandToolConfig>;

  constructor(private readonly options: CodexThreadsOptions) {
    this.commandTools = new Map(options.core.commandTools.map((tool) => [tool.name, tool]));
  }

  /**
   * The thread of a session the tenant may see, observing the session the first time. Every way of
   * not having it — unknown, another tenant's, closed by an Ask client — is the same error.
   */
  async open(threadId: string, tenant: string | undefined): Promise<CodexThread> {
    // Tau takes only non-blank session ids: anything else is no thread, without asking it.
    if (namesNoSession(threadId)) throw threadNotFound(threadId);
    const existing = this.threads.get(threadId);
    if (existing && existing.record.tenant === tenant && !this.options.core.sessions.isClosed(threadId)) return existing;
    let record;
    try {
      record = await this.options.core.sessions.access(threadId, tenant);
    } catch (error) {
      if (error instanceof SessionError && error.code === "session_not_found") throw threadNotFound(threadId);
      if (error instanceof TauResponseError && UNKNOWN_SESSION.has(error.code)) throw threadNotFound(threadId);
      throw error;
    }
    let thread = this.threads.get(threadId);
    if (!thread) {
      thread = new CodexThread({ record, upstream: this.options.core.hosts, serverVersion: this.options.serverVersion, commandTools: this.commandTools, requesterOf: (t) => new CodexServerRequests(() => t, this.options.core.roles), roles: this.options.core.roles, log: this.options.log });
      this.threads.set(threadId, thread);
    }
    return thread;
  }

  /**
   * The child thread of a sub-agent of a session the tenant may see and the gateway holds open: its
   * parent thread (opened) and the sub-agent's id. Undefined when no such sub-agent is known.
   * The id of a thread held here is a session's, never a sub-agent's (Tau names both with UUIDs of
   * their own), so it is answered by the thread, without looking through every session's sub-agents.
   */
  async openChild(threadId: string, tenant: string | undefined): Promise<{ parent: CodexThread; agentId: string } | undefined> {
    if (this.threads.has(threadId)) return undefined;
    const { sessions } = this.options.core;
    const found = findChild(sessions.all(), threadId, tenant);
    if (!found || sessions.isClosed(found.record.sessionId)) return undefined;
    return { parent: await this.open(found.record.sessionId, tenant), agentId: threadId };
  }

  get(threadId: string): CodexThread | undefined {
    return this.threads.get(threadId);
  }

  /** Threads the connection loaded, in the order they were first touched. */
  loadedBy(peer: CodexPeer): CodexThread[] {
    return [...this.threads.values()].filter((t) => t.isLoadedBy(peer));
  }

  /**
   * The connection went away. An ephemeral thread it was the last client of goes with it: its
   * session is closed for every dialect (its turn interrupted, its pending questions cancelled),
   * as the app-server drops an ephemeral thread once no client has it loaded.
   */
  dropPeer(peer: CodexPeer): void {
    for (const thread of [...this.threads.values()]) {
      const had = thread.isLoadedBy(peer);
      thread.detach(peer);
      if (had && thread.ephemeral && !thread.loaded) this.closeEphemeral(thread);
    }
  }

  private closeEphemeral(thread: CodexThread): void {
    this.threads.delete(thread.threadId);
    const { hosts: upstream, sessions } = this.options.core;
    closeSession({ upstream, sessions }, thread.record, { log: this.options.log }).catch((error: unknown) =>
      this.options.log?.("warn", "closing an ephemeral thread whose last client left failed; the session stays open", { threadId: thread.threadId, error: String(error) }),
    );
  }
}
