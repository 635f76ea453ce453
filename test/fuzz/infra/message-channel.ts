import type { RenderedPiece } from "../generators/pieces.js";

/**
 * A client connection that carries text messages both ways — a WebSocket, or a child process's
 * stdin/stdout as NDJSON — as the fuzz runner drives it. Each kind knows how the gateway will cut
 * and decode what is sent, so the oracle can reason about exactly what the gateway reads.
 */
export interface MessageChannel {
  /** What the gateway reads from these pieces: text units in order, and the close they cause (if any). */
  delivery(pieces: readonly RenderedPiece[]): Delivery;
  /** Sends the first `count` pieces (those `delivery` said are delivered). */
  send(pieces: readonly RenderedPiece[]): void;
  /** Sends one text message (the runner's own requests, a normal session's). */
  sendText(text: string): void;
  /** Every message received from now on, as text; returns a function that stops listening. */
  onMessage(listener: (text: string) => void): () => void;
  /** Set once the connection closed (code as received, 1006 without a close frame). */
  readonly closeCode: number | undefined;
  /** Resolves with the close code once closed, or undefined after `timeoutMs`. */
  closed(timeoutMs: number): Promise<number | undefined>;
  close(): Promise<void>;
}

export interface Delivery {
  units: string[];
  /** Pieces actually sent: those up to the one that makes the gateway close the connection. */
  count: number;
  /** The close code the gateway must answer the last piece with, when it closes the connection. */
  closeCode?: number;
}
