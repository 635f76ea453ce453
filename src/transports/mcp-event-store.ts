import type { EventId, EventStore, StreamId } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** Events one Streamable HTTP session keeps for clients that resume a stream (`Last-Event-ID`). */
export const DEFAULT_MCP_RETAINED_EVENTS = 2_000;

interface StoredEvent {
  seq: number;
  streamId: StreamId;
  message: JSONRPCMessage;
}

/**
 * What one MCP session sent on its event streams, for the SDK's Streamable HTTP transport to
 * replay to a client that comes back with `Last-Event-ID` (resumability). One store per session:
 * an event id is only ever resolved within the session that sent it, so one client can never
 * replay another's stream. Bounded: the oldest events go first; a client resuming from an event
 * no longer kept is refused (see `has`) rather than silently missing what came between.
 *
 * Event ids are `<seq>` of the session, increasing: what follows an event on its stream is every
 * later event of the same stream, in order.
 */
export class McpEventStore implements EventStore {
  private readonly events: StoredEvent[] = [];
  private nextSeq = 1;

  constructor(private readonly retained = DEFAULT_MCP_RETAINED_EVENTS) {}

  storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const seq = this.nextSeq++;
    this.events.push({ seq, streamId, message });
    if (this.events.length > this.retained) this.events.splice(0, this.events.length - this.retained);
    return Promise.resolve(String(seq));
  }

  /** Whether `eventId` names an event still kept (a resume from it can be honoured exactly). */
  has(eventId: string): boolean {
    return this.indexOf(eventId) !== -1;
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const at = this.indexOf(lastEventId);
    if (at === -1) throw new Error(`no event ${lastEventId} is kept`);
    const { streamId } = this.events[at]!;
    for (const event of this.events.slice(at + 1)) {
      // The priming events (empty, only there to give the client an id) carry nothing to replay.
      if (event.streamId === streamId && "jsonrpc" in event.message) await send(String(event.seq), event.message);
    }
    return streamId;
  }

  private indexOf(eventId: string): number {
    if (!/^[1-9]\d{0,15}$/.test(eventId)) return -1;
    const seq = Number(eventId);
    const first = this.events[0]?.seq;
    if (first === undefined || seq < first || seq >= this.nextSeq) return -1;
    return seq - first;
  }
}
