import type { Writable } from "node:stream";

/**
 * Backpressure toward clients. A client that stops reading makes everything sent to it pile up in
 * the gateway's memory; instead, a client whose unread backlog is already past the bound when there
 * is more to send is disconnected (WebSocket close 1013 "try again later") and counted. Checking
 * the backlog *before* a send lets one large answer through to a client that keeps up.
 */

export const CLOSE_TRY_AGAIN_LATER = 1013;

export function isSlowConsumer(bufferedBytes: number, maxBufferedBytes: number): boolean {
  return bufferedBytes > maxBufferedBytes;
}

export function slowConsumerReason(maxBufferedBytes: number): string {
  return `client too slow: more than ${maxBufferedBytes} bytes were waiting to be read`;
}

/**
 * The same rule for plain HTTP streams (e.g. server-sent events): writes `chunk`, unless the
 * reader is too slow, in which case the stream is destroyed, `onDropped` runs and false is returned.
 */
export function writeUnlessSlow(stream: Writable, chunk: string, maxBufferedBytes: number, onDropped: () => void): boolean {
  if (stream.destroyed) return false;
  if (isSlowConsumer(stream.writableLength, maxBufferedBytes)) {
    onDropped();
    stream.destroy();
    return false;
  }
  stream.write(chunk);
  return true;
}
