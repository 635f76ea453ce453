import { followFeed } from "../../inspector/feed.js";
import type { ConnectionInfo } from "../../src/gateway/inspector/connection-trace.js";
import type { InspectorEvent, InspectorSnapshot, ReceiptNotice, SequencedFrame } from "../../src/gateway/inspector/inspector-hub.js";

/**
 * Follows the inspector's feed at `url` with the page's own module (as `token`'s holder, when
 * given), gathering the frames, connections and receipt steps it shows; `until` awaits a condition on them.
 */
export async function watchInspectorFeed(url: string, cleanups: { push(fn: () => unknown): void }, token?: string) {
  const frames: SequencedFrame[] = [];
  const connections = new Map<string, ConnectionInfo>();
  const receipts: ReceiptNotice[] = [];
  let lastSeq = 0;
  /** Events received after the snapshot. */
  let received = 0;
  let refused: string | undefined;
  const feed = followFeed({
    url,
    token,
    onEvent(type, data: InspectorEvent | InspectorSnapshot) {
      if (type === "snapshot") {
        const snapshot = data as InspectorSnapshot;
        frames.push(...snapshot.frames);
        for (const c of snapshot.connections) connections.set(c.id, c);
        lastSeq = snapshot.seq;
        return;
      }
      const event = data as InspectorEvent;
      lastSeq = event.seq;
      received++;
      if (event.type === "frame") frames.push(event.frame);
      else if (event.type === "connection") connections.set(event.connection.id, event.connection);
      else if (event.type === "receipt") receipts.push(event.receipt);
    },
    onState(state, detail) {
      if (state === "refused") refused = detail;
    },
  });
  cleanups.push(() => feed.stop());
  const until = async (predicate: () => boolean, what: string) => {
    const deadline = Date.now() + 15_000;
    while (!predicate()) {
      if (refused !== undefined) throw new Error(`the feed was refused (${refused}) while waiting for ${what}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { frames, connections, receipts, until, lastSeq: () => lastSeq, received: () => received, stop: () => feed.stop() };
}
