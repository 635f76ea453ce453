import { randomBytes } from "node:crypto";
import { causeOfWrite, trackEventCauses } from "../../shared/event-cause.js";
import { onFirstMessage, type ConnectionRecording } from "../../transports/recording/connection-recording.js";
import type { FrameTap, TappedPeer } from "../../transports/recording/frame-tap.js";
import type { RecordedDialect } from "../../transports/recording/transcript-lines.js";
import { ConnectionTrace, frameBytes, type ConnectionInfo, type ConnectionLimits, type InspectedFrame } from "./connection-trace.js";
import type { OperatorDecision } from "./operator-decisions.js";
import type { ReceiptStep } from "../../bridge/interactions/policy/receipts.js";

/**
 * What `serve --inspector` keeps in memory, fed by the same tap as `serve --record`: a trace of
 * every client connection (the live ones and the last few closed), and the latest events in one
 * numbered sequence, so a page whose feed dropped resumes where it left off (`Last-Event-ID`).
 * Everything is bounded: frames and bytes per connection, bytes over every connection together
 * (live and closed: the oldest frames go first, whichever connection they are of), closed
 * connections kept, events kept (by count and by the bytes of their frames).
 *
 * What a tenant's token sees must not count the other tenants' traffic, so besides the hub's own
 * sequence every event of a tenant's connection (and every operator answer in a tenant's session)
 * gets a number in that tenant's own sequence (`tenantSeq`), and a tenant's connections get ids
 * that count nothing (`ask-3f9a01c2`); connections of no tenant (a gateway without tokens) are
 * numbered `ask-1`, `codex-2`, … as before. inspector-viewer.ts shows each viewer its numbering.
 */

export interface InspectorLimits extends ConnectionLimits {
  /** Closed connections still shown (the oldest go first). */
  maxClosedConnections: number;
  /** Events a resuming feed can catch up on; further back it gets a fresh snapshot. */
  maxEvents: number;
  /** Frames a fresh snapshot carries (the newest, over all connections). */
  maxSnapshotFrames: number;
  /** Bytes of frames kept over every connection; and, apart, of the frames in the events kept for resuming feeds. */
  maxTotalBytes: number;
}

export const DEFAULT_INSPECTOR_LIMITS: InspectorLimits = {
  maxFrames: 2000,
  maxBytes: 4 * 1024 * 1024,
  maxClosedConnections: 50,
  maxEvents: 10_000,
  maxSnapshotFrames: 3000,
  maxTotalBytes: 64 * 1024 * 1024,
};

export type InspectorEvent =
  | { seq: number; type: "connection"; connection: ConnectionInfo }
  | { seq: number; type: "frame"; frame: SequencedFrame; inflight: ConnectionInfo["inflight"] }
  | { seq: number; type: "decision"; decision: OperatorDecision }
  | { seq: number; type: "receipt"; receipt: ReceiptNotice };

/**
 * A step was added to a receipt of a session: the page reads the session's receipts again (from
 * /inspector/api/sessions/:id/receipts, which answers only those who may read them), so the feed
 * carries what a viewer of the session sees anyway (its events), never the receipt itself.
 */
export interface ReceiptNotice {
  sessionId: string;
  callId: string;
  step: ReceiptStep["step"];
}

/** Operator answers a fresh snapshot carries. */
const MAX_DECISIONS = 200;

export type SequencedFrame = InspectedFrame & { seq: number };

export interface InspectorSnapshot {
  seq: number;
  connections: ConnectionInfo[];
  frames: SequencedFrame[];
  /** Answers operators gave from the page (the newest). */
  decisions: OperatorDecision[];
}

export class InspectorHub implements FrameTap {
  private readonly traces = new Map<string, ConnectionTrace>();
  private readonly closedIds: string[] = [];
  private readonly events: InspectorEvent[] = [];
  private readonly listeners = new Set<(event: InspectorEvent) => void>();
  private readonly decisions: OperatorDecision[] = [];
  private seq = 0;
  private opened = 0;
  /** Each tenant's own sequence: its newest number. */
  private readonly tenantSeqs = new Map<string, number>();
  /** The tenant and tenant number of each event of a tenant, and of each frame of a tenant's connection. */
  private readonly scopes = new WeakMap<object, { tenant: string; seq: number }>();
  /** Every frame kept, oldest first, for the bound over all connections (entries of frames dropped since are skipped). */
  private readonly keptOrder: Array<{ trace: ConnectionTrace; frame: InspectedFrame }> = [];
  private readonly kept = new Set<InspectedFrame>();
  private keptBytes = 0;
  private eventBytes = 0;

  constructor(readonly limits: InspectorLimits = DEFAULT_INSPECTOR_LIMITS) {
    // Frames the gateway sends name the session event they are part of (the cross-dialect timeline).
    trackEventCauses();
  }

  connection(dialect: RecordedDialect, transport: string, peer: TappedPeer = {}): ConnectionRecording {
    // A tenant's ids must not count the connections of every tenant: random, where tenantless ones are counted.
    const id = peer.tenant === undefined ? `${dialect}-${++this.opened}` : `${dialect}-${randomBytes(4).toString("hex")}`;
    const trace = new ConnectionTrace(id, dialect, transport, new Date(), { tenant: peer.tenant, tokenId: peer.tokenId }, this.limits, (frame, kept) => {
      if (kept) this.kept.add(frame);
      else this.kept.delete(frame);
      this.keptBytes += kept ? frameBytes(frame) : -frameBytes(frame);
    });
    this.traces.set(id, trace);
    this.publishConnection(trace);
    const record = (direction: "client" | "server", text: string) => {
      if (trace.closed) return;
      // Read as the frame is written: what the writer declared it was caused by.
      const cause = direction === "server" ? causeOfWrite() : undefined;
      for (const frame of trace.add(direction, text, new Date(), cause)) {
        const sequenced = Object.assign(frame, { seq: ++this.seq });
        this.keptOrder.push({ trace, frame });
        this.boundKeptBytes();
        const event: InspectorEvent = { seq: sequenced.seq, type: "frame", frame: sequenced, inflight: trace.info().inflight };
        const scope = this.number(event, trace.tenant);
        if (scope) this.scopes.set(sequenced, scope);
        this.publish(event);
      }
    };
    return {
      client: (text) => record("client", text),
      server: (data) => record("server", typeof data === "string" ? data : Buffer.from(data).toString("utf8")),
      close: () => {
        if (trace.closed) return;
        trace.close();
        this.publishConnection(trace);
        this.closedIds.push(id);
        while (this.closedIds.length > this.limits.maxClosedConnections) this.forget(this.closedIds.shift()!);
      },
    };
  }

  connectionOnFirstMessage(dialect: RecordedDialect, transport: string, peer: TappedPeer = {}): ConnectionRecording {
    return onFirstMessage(() => this.connection(dialect, transport, peer));
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }

  trace(id: string): ConnectionTrace | undefined {
    return this.traces.get(id);
  }

  /** What is kept now; `visible` (given a connection's tenant) leaves out the connections, and frames, it refuses. */
  snapshot(visible: (tenant: string | undefined) => boolean = () => true): InspectorSnapshot {
    const traces = [...this.traces.values()].filter((trace) => visible(trace.tenant));
    const frames = traces.flatMap((trace) => trace.frames() as SequencedFrame[]);
    frames.sort((a, b) => a.seq - b.seq);
    return {
      seq: this.seq,
      connections: traces.map((trace) => trace.info()),
      frames: frames.slice(-this.limits.maxSnapshotFrames),
      decisions: [...this.decisions],
    };
  }

  /** An operator answered an interaction from the page: kept (the newest) and published to every open page; `tenant`: the session's. */
  recordDecision(decision: OperatorDecision, tenant?: string): void {
    this.decisions.push(decision);
    if (this.decisions.length > MAX_DECISIONS) this.decisions.shift();
    const event: InspectorEvent = { seq: ++this.seq, type: "decision", decision };
    this.number(event, tenant);
    this.publish(event);
  }

  /** A step was added to a receipt of a session (`tenant`: the session's): published to every open page that sees the session. */
  recordReceiptStep(receipt: ReceiptNotice, tenant?: string): void {
    const event: InspectorEvent = { seq: ++this.seq, type: "receipt", receipt };
    this.number(event, tenant);
    this.publish(event);
  }

  /** The newest number of `tenant`'s own sequence (0 before its first event). */
  tenantSeq(tenant: string): number {
    return this.tenantSeqs.get(tenant) ?? 0;
  }

  /** The tenant and tenant number of an event or a frame of a tenant; undefined for those of no tenant. */
  scopeOf(item: object): { tenant: string; seq: number } | undefined {
    return this.scopes.get(item);
  }

  /**
   * The events of `tenant` after its number `seq`, or undefined when some of them are no longer
   * kept (or `seq` is not one of its numbers).
   */
  sinceForTenant(tenant: string, seq: number): InspectorEvent[] | undefined {
    const newest = this.tenantSeq(tenant);
    if (!Number.isInteger(seq) || seq < 0 || seq > newest) return undefined;
    if (seq === newest) return [];
    const kept = this.events.filter((event) => this.scopes.get(event)?.tenant === tenant);
    const first = kept[0] && this.scopes.get(kept[0])!.seq;
    if (first === undefined || first > seq + 1) return undefined;
    return kept.filter((event) => this.scopes.get(event)!.seq > seq);
  }

  /** Gives a tenant's event the next number of the tenant's sequence. */
  private number(event: InspectorEvent, tenant: string | undefined): { tenant: string; seq: number } | undefined {
    if (tenant === undefined) return undefined;
    const scope = { tenant, seq: this.tenantSeq(tenant) + 1 };
    this.tenantSeqs.set(tenant, scope.seq);
    this.scopes.set(event, scope);
    return scope;
  }

  /** The events after `seq`, or undefined when some of them are no longer kept (or `seq` is not one of ours). */
  since(seq: number): InspectorEvent[] | undefined {
    if (!Number.isInteger(seq) || seq < 0 || seq > this.seq) return undefined;
    if (seq === this.seq) return [];
    const first = this.events[0];
    if (!first || first.seq > seq + 1) return undefined;
    return this.events.slice(seq + 1 - first.seq);
  }

  /** Calls `listener` with every new event until the returned function is called. */
  subscribe(listener: (event: InspectorEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Bytes of frames kept over every connection, and in the events kept (the bounds' measures). */
  get bytes(): { frames: number; events: number } {
    return { frames: this.keptBytes, events: this.eventBytes };
  }

  private forget(id: string): void {
    const trace = this.traces.get(id);
    if (!trace) return;
    this.traces.delete(id);
    while (trace.frames().length > 0) trace.dropIfOldest(trace.frames()[0]!);
    this.compactKeptOrder();
  }

  /** The oldest frames go, whichever connection they are of, until the kept bytes are within the bound. */
  private boundKeptBytes(): void {
    while (this.keptBytes > this.limits.maxTotalBytes && this.keptOrder.length > 0) {
      const { trace, frame } = this.keptOrder.shift()!;
      trace.dropIfOldest(frame);
    }
    this.compactKeptOrder();
  }

  /** Entries of frames a connection dropped by its own bounds stay until they lead; past twice the frames kept, they are cleared. */
  private compactKeptOrder(): void {
    if (this.keptOrder.length <= 2 * this.kept.size + 64) return;
    const live = this.keptOrder.filter(({ frame }) => this.kept.has(frame));
    this.keptOrder.splice(0, this.keptOrder.length, ...live);
  }

  private publishConnection(trace: ConnectionTrace): void {
    const event: InspectorEvent = { seq: ++this.seq, type: "connection", connection: trace.info() };
    this.number(event, trace.tenant);
    this.publish(event);
  }

  private publish(event: InspectorEvent): void {
    this.events.push(event);
    this.eventBytes += eventBytes(event);
    let drop = Math.max(0, this.events.length - this.limits.maxEvents);
    for (let bytes = this.eventBytes; bytes > this.limits.maxTotalBytes && drop < this.events.length - 1; ) bytes -= eventBytes(this.events[drop++]!);
    if (drop > 0) for (const dropped of this.events.splice(0, drop)) this.eventBytes -= eventBytes(dropped);
    for (const listener of this.listeners) listener(event);
  }
}

const eventBytes = (event: InspectorEvent): number => (event.type === "frame" ? frameBytes(event.frame) : 0);
