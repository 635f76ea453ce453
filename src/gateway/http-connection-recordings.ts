import type { Socket } from "node:net";
import type { FrameTap } from "../transports/recording/frame-tap.js";
import type { ConnectionRecording } from "../transports/recording/recording-folder.js";
import type { RecordedDialect } from "../transports/recording/transcript-lines.js";

/**
 * Recordings of plain HTTP requests (`serve --record`), one per HTTP connection rather than one
 * per request: the requests a client sends over one kept-alive connection, and their answers,
 * land in one file, in the order they crossed it — what a client's run reads like, and (each
 * answer following its request) what `tau-gateway validate` correlates. A connection that never
 * carries a recorded message leaves no file; its recording ends when the connection closes.
 */
export function httpConnectionRecordings(tap: FrameTap, dialect: RecordedDialect, transport: string): (socket: Socket) => ConnectionRecording {
  const recordings = new WeakMap<Socket, ConnectionRecording>();
  return (socket) => {
    const known = recordings.get(socket);
    if (known) return known;
    const recording = tap.connectionOnFirstMessage(dialect, transport);
    recordings.set(socket, recording);
    socket.once("close", () => recording.close());
    return recording;
  };
}
