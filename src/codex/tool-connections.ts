import type { ClientToolDefinition } from "../../generated/tau-v18.js";
import type { TauUpstream } from "../tau/upstream.js";
import { codexError } from "./codex-errors.js";

/**
 * The Tau connections that advertise Codex clients' dynamic tools, shared. Tau takes a
 * connection's tools once, at its first `initialize`, and offers them in every session the
 * connection observes (Tau spec §7): so every thread whose client brings the same tools (the same
 * names, descriptions and schemas: a client offers the same set on each of its threads) shares one
 * connection to its session's host, which observes each of those sessions, and the calls Tau
 * makes on it go to the thread of their session. A connection is opened at the first such thread
 * and closed with the last. Distinct tool sets need connections of their own: at most
 * MAX_TOOL_CONNECTIONS of them are open at once, and a thread/start past it is refused.
 */

/** Connections for dynamic tools open at once, over every client (each distinct tool set on each host takes one). */
export const MAX_TOOL_CONNECTIONS = 64;

/** Opens the connection that advertises `tools`, to the host of session `sessionId` (the composition root knows the hosts). */
export type ToolConnectionFactory = (tools: ClientToolDefinition[], sessionId: string) => TauUpstream;

type MessageHandler = (message: Parameters<Parameters<TauUpstream["onMessage"]>[0]>[0]) => void;

interface Shared {
  connection: TauUpstream;
  started: Promise<void>;
  /** The sessions it observes for a thread, with where their messages go. */
  sessions: Map<string, MessageHandler>;
}

/** A thread's hold on a shared connection: its session observed on it; `release` unobserves it (closing the connection with its last session). */
export interface ToolConnectionLease {
  readonly connection: TauUpstream;
  release(): Promise<void>;
}

export class ToolConnections {
  private readonly shared = new Map<string, Shared>();

  constructor(
    private readonly open: ToolConnectionFactory,
    /** The host a session lives on (its key in the pool: a connection reaches one host). */
    private readonly hostOf: (sessionId: string) => string,
    private readonly max = MAX_TOOL_CONNECTIONS,
  ) {}

  /** Connections open now. */
  get size(): number {
    return this.shared.size;
  }

  /** Observes `sessionId` on the connection that advertises `tools` on its host (opened if none does yet); its messages about that session go to `onMessage`. */
  async attach(tools: ClientToolDefinition[], sessionId: string, onMessage: MessageHandler): Promise<ToolConnectionLease> {
    const key = `${this.hostOf(sessionId)}\n${JSON.stringify(tools)}`;
    let entry = this.shared.get(key);
    if (!entry) {
      if (this.shared.size >= this.max) {
        throw codexError(
          "overloaded",
          `the gateway already holds ${this.max} connections for dynamic tools, one per distinct set of tools; offer the same tools as an open thread, or close threads, and retry`,
          { limit: this.max },
        );
      }
      const connection = this.open(tools, sessionId);
      const created: Shared = { connection, started: connection.start(), sessions: new Map() };
      entry = created;
      connection.onMessage((message) => {
        const session = (message as { sessionId?: string }).sessionId;
        if (session !== undefined) created.sessions.get(session)?.(message);
      });
      this.shared.set(key, created);
      created.started.catch(() => this.forget(key, created));
    }
    const held = entry;
    held.sessions.set(sessionId, onMessage);
    try {
      await held.started;
      // Observing attaches the connection's tools to the session (Tau spec §7).
      await held.connection.request("session.observe", { sessionId });
    } catch (error) {
      await this.detach(key, held, sessionId, false);
      throw error;
    }
    let released = false;
    return {
      connection: held.connection,
      release: async () => {
        if (released) return;
        released = true;
        await this.detach(key, held, sessionId, true);
      },
    };
  }

  private async detach(key: string, entry: Shared, sessionId: string, observed: boolean): Promise<void> {
    entry.sessions.delete(sessionId);
    if (entry.sessions.size === 0) {
      this.forget(key, entry);
      await entry.connection.close().catch(() => undefined);
      return;
    }
    // Others still use the connection: only this session's tools go (Tau cancels their calls still running).
    if (observed) await entry.connection.request("session.unobserve", { sessionId }).catch(() => undefined);
  }

  private forget(key: string, entry: Shared): void {
    if (this.shared.get(key) === entry) this.shared.delete(key);
  }
}
