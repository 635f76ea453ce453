import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { InitializeRequestSchema, isInitializeRequest, isJSONRPCErrorResponse, isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { RequestId } from "../../generated/mcp-v2025-11-25.js";
import { McpHttpReplicas } from "../mcp/http-session-records.js";
import type { McpServer } from "../mcp/server.js";
import type { Log } from "../shared/log.js";
import type { SharedRecords } from "../store/shared-records.js";
import type { CallGate } from "./jsonrpc-envelope.js";
import { McpEventStore } from "./mcp-event-store.js";
import { jsonRpcError } from "./mcp-http-errors.js";
import { attachMcpJsonRpc, type McpJsonRpcConnection } from "./mcp-jsonrpc.js";
import type { ConnectionRecording } from "./recording/connection-recording.js";
import type { SessionPrincipal } from "../bridge/session-roles.js";

/**
 * MCP's Streamable HTTP transport, server side: sessions (`Mcp-Session-Id`), each the official
 * SDK's transport (its POST answered as JSON or an event stream, the GET event stream, DELETE,
 * resumability from `Last-Event-ID` through a store of the session's own, the revision header)
 * with the gateway's MCP connection behind it (mcp-jsonrpc.ts): the same seam as every other MCP
 * transport, so a session here is one MCP client like a stdio or WebSocket one. A session belongs
 * to the tenant that started it: another tenant's requests find no such session.
 *
 * A message written as part of one of the client's requests (a tool call's progress, a form its
 * turn waits for) goes on that request's response stream while it is open, else on the GET stream
 * (kept for replay while none is open), as do messages part of none.
 */

/** How long a session with no request, call or stream lasts before it is ended (a host that went away without DELETE). */
export const DEFAULT_MCP_SESSION_IDLE_MS = 30 * 60_000;

export interface McpHttpOptions {
  /** Sessions open at once, all tenants together; one more initialize is refused with 503. */
  maxSessions: number;
  /** Interval of the keep-alive comments on event streams (the SDK's default when undefined). */
  heartbeatMs?: number;
  idleMs?: number;
  /** Events each session keeps for resuming streams. */
  retainedEvents?: number;
  /**
   * With replicas sharing a store: where each session says which replica serves it, so that another
   * replica reached with its id tells the client why it does not know it (mcp/http-session-records.ts).
   */
  shared?: SharedRecords;
  log?: Log;
}

/** Who sends one HTTP request of the transport, and what a new session of theirs gets. */
export interface McpHttpCaller {
  tenant: string | undefined;
  /** Who the request authenticated as: a session is its initializer's, and answers no other principal. */
  principal?: SessionPrincipal;
  /** The gates of a session this request starts (made only then). */
  gate(): CallGate;
  /** Its recording (`serve --record`), if a session starts. */
  recording?(): ConnectionRecording;
}

/** A request as the transport reads it; `body`: a POST's JSON, parsed. */
export interface McpHttpRequest {
  method: string;
  url: string;
  headers: Headers;
  body?: unknown;
}

/** Counts every session's activity, so that "idle the longest" never ties within a millisecond. */
let activity = 0;

class McpHttpSession {
  readonly id = randomUUID();
  readonly store: McpEventStore;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly connection: McpJsonRpcConnection;
  lastActive = Date.now();
  /** The token id of the principal that initialized it (undefined without tokens). */
  readonly principal: string | undefined;
  /** When it was last at work, in the order of all sessions' activity (the cap ends the least recent). */
  order = ++activity;
  /** The transport closed (DELETE, idle, the gateway closing): the request that ended it is no activity. */
  private ended = false;
  /** HTTP requests being handled and event streams open: while any is, the session is not idle. */
  busy = 0;
  /** Ids (as JSON) of the client's requests not yet answered on an event stream: what a related message may go with. */
  private readonly open = new Set<string>();

  constructor(
    server: McpServer,
    readonly tenant: string | undefined,
    /** POSTs are answered with one JSON body, not an event stream (the client's initialize preferred it). */
    private readonly json: boolean,
    caller: McpHttpCaller,
    private readonly options: McpHttpOptions,
    onClose: (session: McpHttpSession) => void,
    /** Told each time the session is at work (the replicas' record of it is kept alive). */
    private readonly onActive: (session: McpHttpSession) => void = () => undefined,
  ) {
    this.store = new McpEventStore(options.retainedEvents);
    this.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => this.id,
      enableJsonResponse: json,
      eventStore: this.store,
      keepAliveMs: options.heartbeatMs,
      // The gateway's front door has checked Host and Origin already.
      enableDnsRebindingProtection: false,
      onsessionclosed: () => options.log?.("debug", "MCP session ended by its client", { session: this.id }),
    });
    const recording = caller.recording?.();
    this.connection = attachMcpJsonRpc(server, (text, relatedRequestId) => this.send(text, relatedRequestId, recording), { tenant, principal: caller.principal, gate: caller.gate() });
    this.principal = caller.principal?.tokenId;
    this.transport.onmessage = (message) => {
      const text = JSON.stringify(message);
      recording?.client(text);
      // A JSON answer has no stream for what is part of its request: that goes on the GET stream.
      if (isJSONRPCRequest(message) && !this.json) this.open.add(JSON.stringify(message.id));
      this.busy++;
      void this.connection.receive(text).finally(() => {
        this.busy--;
        this.touch();
      });
    };
    this.transport.onerror = (error) => options.log?.("debug", "MCP HTTP request refused", { session: this.id, error: error.message });
    this.transport.onclose = () => {
      this.ended = true;
      this.connection.close();
      recording?.close();
      onClose(this);
    };
  }

  private send(text: string, relatedRequestId: RequestId | undefined, recording: ConnectionRecording | undefined): void {
    recording?.server(text);
    const message = JSON.parse(text) as JSONRPCMessage;
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) this.open.delete(JSON.stringify(message.id));
    // Once its request was answered its stream is gone: the GET stream carries it (or keeps it for replay).
    const related = relatedRequestId !== undefined && this.open.has(JSON.stringify(relatedRequestId)) ? relatedRequestId : undefined;
    this.transport.send(message, related === undefined ? undefined : { relatedRequestId: related }).catch((error: unknown) => {
      // The client left the request's stream without a way back (no event id yet): nothing can carry the answer.
      this.options.log?.("debug", "MCP message not delivered: its stream is gone", { session: this.id, error: String(error) });
    });
  }

  private touch(): void {
    this.lastActive = Date.now();
    this.order = ++activity;
    if (!this.ended) this.onActive(this);
  }

  async handle(request: Request, body: unknown): Promise<Response> {
    this.busy++;
    try {
      return await this.transport.handleRequest(request, body === undefined ? undefined : { parsedBody: body });
    } finally {
      this.busy--;
      this.touch();
    }
  }

  /** An event stream of the session is open until the returned function is called. */
  streaming(): () => void {
    this.busy++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.busy--;
      this.touch();
    };
  }
}

export type { McpHttpSession };

/** The sessions of one gateway's `/mcp`. */
export class McpHttpSessions {
  private readonly sessions = new Map<string, McpHttpSession>();
  private readonly sweep: NodeJS.Timeout;
  private readonly replicas: McpHttpReplicas | undefined;

  constructor(
    private readonly server: McpServer,
    private readonly options: McpHttpOptions,
  ) {
    const idleMs = options.idleMs ?? DEFAULT_MCP_SESSION_IDLE_MS;
    this.replicas = options.shared && new McpHttpReplicas(options.shared, idleMs, options.log);
    this.sweep = setInterval(() => this.endIdle(idleMs), Math.max(1_000, Math.min(60_000, idleMs / 4)));
    this.sweep.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /**
   * Answers one request of the transport: a POST without a session must be initialize (it starts
   * one); any other names its session by `Mcp-Session-Id`. The session, when there is one, is
   * returned so that the caller can tell it how long an event stream it answered with stays open.
   */
  async handle(request: McpHttpRequest, caller: McpHttpCaller): Promise<{ response: Response; session?: McpHttpSession }> {
    const web = new Request(request.url, { method: request.method, headers: request.headers });
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId === null) {
      if (request.method === "POST" && isInitializeRequest(request.body)) {
        if (this.sessions.size >= this.options.maxSessions && !this.endLeastRecentIdle()) {
          return { response: jsonRpcError(503, -32000, `the gateway has reached its limit of ${this.options.maxSessions} MCP sessions, all of them busy; retry later`, { "retry-after": "1" }) };
        }
        const json = prefersJson(request.headers.get("accept"));
        const session = new McpHttpSession(
          this.server,
          caller.tenant,
          json,
          caller,
          this.options,
          (ended) => {
            this.sessions.delete(ended.id);
            this.replicas?.ended(ended.id);
          },
          (active) => this.replicas?.active(active.id, active.tenant),
        );
        this.sessions.set(session.id, session);
        this.replicas?.active(session.id, session.tenant);
        return { response: await session.handle(web, request.body), session };
      }
      return { response: noSession(request) };
    }
    const session = this.sessions.get(sessionId);
    // Another tenant's session does not exist for this caller, as its sessions do not.
    // So is one another principal of the tenant started: a session id is no bearer capability.
    if (!session || session.tenant !== caller.tenant || session.principal !== caller.principal?.tokenId) {
      if (!session && (await this.replicas?.servedElsewhere(sessionId, caller.tenant))) {
        return { response: jsonRpcError(404, -32001, ELSEWHERE) };
      }
      return { response: jsonRpcError(404, -32001, "Session not found: start a new one with initialize") };
    }
    const lastEventId = request.headers.get("last-event-id");
    if (request.method === "GET" && lastEventId !== null && !session.store.has(lastEventId)) {
      return { response: jsonRpcError(400, -32000, `Bad Request: Last-Event-ID ${JSON.stringify(lastEventId)} names no event this session still keeps`) };
    }
    return { response: await session.handle(web, request.body), session };
  }

  /** Ends every session (the gateway is closing): their streams end, their calls' turns run on. */
  async closeAll(): Promise<void> {
    clearInterval(this.sweep);
    await Promise.all([...this.sessions.values()].map((session) => session.transport.close()));
  }

  /**
   * At the cap, the session idle the longest (no request, call or stream) makes room: a host that
   * starts sessions and never ends them cannot lock the others out for the idle deadline. Sessions
   * at work are never ended for it.
   */
  private endLeastRecentIdle(): boolean {
    let oldest: McpHttpSession | undefined;
    for (const session of this.sessions.values()) if (session.busy === 0 && (!oldest || session.order < oldest.order)) oldest = session;
    if (!oldest) return false;
    this.options.log?.("info", "MCP session ended to make room for a new one", { session: oldest.id, maxSessions: this.options.maxSessions });
    this.sessions.delete(oldest.id);
    void oldest.transport.close();
    return true;
  }

  private endIdle(idleMs: number): void {
    const before = Date.now() - idleMs;
    for (const session of this.sessions.values()) {
      if (session.busy === 0 && session.lastActive < before) {
        this.options.log?.("info", "idle MCP session ended", { session: session.id, idleMs });
        void session.transport.close();
      }
    }
  }
}

/** Why a replica does not know a session another one serves: the client starts again here, or the balancer routes it home. */
const ELSEWHERE =
  "Session not found on this gateway replica: the replica that started it serves it (MCP sessions over HTTP are not shared between replicas). Start a new one here with initialize (the Tau sessions are shared by every replica), or route /mcp by Mcp-Session-Id";

/**
 * Whether an Accept header ranks `application/json` above `text/event-stream` (both must be
 * there, the SDK's transport checks): `Accept: application/json, text/event-stream;q=0.5`.
 */
export function prefersJson(accept: string | null): boolean {
  const quality = (type: string) => {
    for (const part of (accept ?? "").split(",")) {
      const [name, ...params] = part.split(";").map((piece) => piece.trim().toLowerCase());
      if (name !== type) continue;
      const q = params.find((param) => param.startsWith("q="));
      const value = q === undefined ? 1 : Number(q.slice(2));
      return Number.isFinite(value) ? value : 0;
    }
    return 0;
  };
  return quality("application/json") > quality("text/event-stream");
}

/** Why a request without `Mcp-Session-Id` is refused. */
function noSession(request: McpHttpRequest): Response {
  const body = request.body;
  if (request.method === "POST" && typeof body === "object" && body !== null && (body as { method?: unknown }).method === "initialize") {
    const problem = InitializeRequestSchema.safeParse(body).error?.issues.map((issue) => `${issue.path.join(".") || "(message)"}: ${issue.message}`).join("; ");
    return jsonRpcError(400, -32602, `Invalid params: initialize: ${problem ?? "not an initialize request"}`);
  }
  return jsonRpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required (a session starts with a POST of initialize)");
}
