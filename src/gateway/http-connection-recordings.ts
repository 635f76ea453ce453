import type { Socket } from "node:net";
import type { FrameTap, TappedPeer } from "../transports/recording/frame-tap.js";
import type { ConnectionRecording } from "../transports/recording/recording-folder.js";
import type { RecordedDialect } from "../transports/recording/transcript-lines.js";

/**
 * Recordings of plain HTTP requests (`serve --record`), one per HTTP connection rather than one
 * per request: the requests a client sends over one kept-alive connection, and their answers,
 * land in one file, in the order they crossed it — what a client's run reads like, and (each
 * answer following its request) what `tau-gateway validate` correlates. A connection that never
 * carries a recorded message leaves no file; its recording ends when the connection closes.
 *
 * One per principal, too: a proxy that keeps connections to the gateway open may send requests of
 * several clients over one, and each tenant's requests must stay its own (the inspector shows a
 * tenant only its own connections).
 */
export function httpConnectionRecordings(tap: FrameTap, dialect: RecordedDialect, transport: string): (socket: Socket, peer: TappedPeer) => ConnectionRecording {
  const recordings = new WeakMap<Socket, Map<string, ConnectionRecording>>();
  return (socket, peer) => {
    let byPeer = recordings.get(socket);
    if (!byPeer) {
      const opened = (byPeer = new Map());
      recordings.set(socket, opened);
      socket.once("close", () => opened.forEach((recording) => recording.close()));
    }
    const key = JSON.stringify([peer.tenant ?? null, peer.tokenId ?? null]);
    let recording = byPeer.get(key);
    if (!recording) byPeer.set(key, (recording = tap.connectionOnFirstMessage(dialect, transport, peer)));
    return recording;
  };
}
