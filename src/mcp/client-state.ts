import type { ClientCapabilities, Implementation, LoggingLevel, RequestId } from "../../generated/mcp-v2025-11-25.js";
import { LOGGING_LEVELS } from "../registry/mcp/index.js";
import type { McpPeer } from "./peer.js";

const SEVERITY: ReadonlyMap<LoggingLevel, number> = new Map(LOGGING_LEVELS.map((level, i) => [level, i]));

/** A tools/call still running: what notifications/cancelled does to it. */
export interface RunningCall {
  /** Its JSON-RPC id. */
  readonly id: RequestId;
  /** The session whose turn it runs. */
  readonly sessionId: string;
  cancel(reason: string | undefined): void;
}

/** What the gateway knows about one MCP connection: what it said in initialize, and its calls still running. */
export class McpClient {
  initialized = false;
  /** The revision initialize agreed on. */
  protocolVersion: string | undefined;
  capabilities: ClientCapabilities = {};
  info: Implementation | undefined;
  /** The least severe level logging/setLevel asked for; undefined: no log messages. */
  logLevel: LoggingLevel | undefined;
  /** The last tools/list told it tau-answer is offered (a session it works with waits for a decision). */
  answerOffered = false;
  /** tools/call requests running, by their JSON-RPC id as JSON text. */
  readonly calls = new Map<string, RunningCall>();

  constructor(readonly peer: McpPeer) {}

  /**
   * The id of this connection's tool call running a turn of the session, if one is: what the
   * session asks of the client then is part of that call (on Streamable HTTP, its response stream).
   */
  callIn(sessionId: string): RequestId | undefined {
    for (const call of this.calls.values()) if (call.sessionId === sessionId) return call.id;
    return undefined;
  }

  /**
   * A log message (notifications/message) when the client asked for its level or a less severe one
   * with logging/setLevel; before that it is sent none (MCP leaves the default to the server).
   */
  log(level: LoggingLevel, logger: string, data: Record<string, unknown>): void {
    if (this.logLevel === undefined || !this.initialized || this.peer.closed) return;
    if (SEVERITY.get(level)! < SEVERITY.get(this.logLevel)!) return;
    this.peer.notify("notifications/message", { level, logger, data });
  }

  /**
   * The client can show a form. An empty `elicitation` capability means form mode (the revision
   * 2025-11-25 keeps it so for clients of 2025-06-18); one naming only `url` cannot show forms.
   */
  get canElicit(): boolean {
    const elicitation = this.capabilities.elicitation;
    if (elicitation == null || this.peer.closed) return false;
    return elicitation.form != null || elicitation.url == null;
  }
}

/** The key of a request id in `McpClient.calls`. */
export const callKey = (id: string | number): string => JSON.stringify(id);
