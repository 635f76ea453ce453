/** What a transport tells the recording of one connection: the raw text received, the text (or bytes) written. */
export interface ConnectionRecording {
  client(text: string): void;
  server(data: string | Uint8Array): void;
  close(): void;
}

/** A connection of `open`'s making, made only when its first message comes (never, if none does). */
export function onFirstMessage(open: () => ConnectionRecording): ConnectionRecording {
  let recording: ConnectionRecording | undefined;
  let closed = false;
  const opened = () => (recording ??= open());
  return {
    client: (text) => void (closed || opened().client(text)),
    server: (data) => void (closed || opened().server(data)),
    close: () => {
      closed = true;
      recording?.close();
    },
  };
}
