import type { ConnectionRecording } from "./connection-recording.js";
import type { RecordedDialect } from "./transcript-lines.js";

/**
 * Who is on the other end of a tapped connection, as far as the gateway knows when it opens:
 * the tenant and token id it authenticated with (none without tokens, or on the Unix socket).
 */
export interface TappedPeer {
  tenant?: string;
  tokenId?: string;
  remoteAddress?: string;
}

/**
 * Something that sees every message of every client connection, both ways, at the point where
 * `serve --record` records them: the recording folder, the live inspector, or both at once.
 */
export interface FrameTap {
  connection(dialect: RecordedDialect, transport: string, peer?: TappedPeer): ConnectionRecording;
  /** The same, opened at its first message: an HTTP connection or event stream that carries none leaves no trace. */
  connectionOnFirstMessage(dialect: RecordedDialect, transport: string, peer?: TappedPeer): ConnectionRecording;
  /** Ends what is still open; resolves once it is. */
  close(): Promise<void>;
}

/** One tap feeding several (absent ones skipped); undefined when there is none. */
export function teeTaps(...taps: (FrameTap | undefined)[]): FrameTap | undefined {
  const present = taps.filter((tap): tap is FrameTap => tap !== undefined);
  if (present.length <= 1) return present[0];
  return {
    connection: (dialect, transport, peer) => tee(present.map((tap) => tap.connection(dialect, transport, peer))),
    connectionOnFirstMessage: (dialect, transport, peer) => tee(present.map((tap) => tap.connectionOnFirstMessage(dialect, transport, peer))),
    close: async () => {
      await Promise.all(present.map((tap) => tap.close()));
    },
  };
}

function tee(recordings: ConnectionRecording[]): ConnectionRecording {
  return {
    client: (text) => recordings.forEach((r) => r.client(text)),
    server: (data) => recordings.forEach((r) => r.server(data)),
    close: () => recordings.forEach((r) => r.close()),
  };
}
