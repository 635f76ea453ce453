import type { Writable } from "node:stream";

/**
 * One system call for all the WebSocket frames a connection sends in one tick. `ws` writes every
 * frame to its TCP socket at once, and a relay typically sends many in a row (the messages of one
 * incoming TCP chunk are emitted synchronously, and each becomes a frame); writing each on its own
 * costs a system call per frame, most of the relay's CPU for small messages. Corking the socket on
 * the first send of a tick and uncorking it in `process.nextTick` hands them to the kernel together
 * (one writev), before the event loop polls for I/O again, so no frame waits longer than it would
 * have for the code that sent it to finish.
 *
 * Corked bytes count in the socket's `writableLength` (and so in `ws`'s `bufferedAmount`) although
 * the kernel was not offered them yet: a backlog check must read the length before corking (see
 * gateway-websocket.ts). `end()` flushes them (a close frame still goes out before the FIN), and
 * `destroy()` drops them as it would drop any write not yet taken by the kernel.
 *
 * Returns whether this call corked the transport (false: no transport, or already corked).
 */
export function corkUntilNextTick(transport: Writable | undefined): boolean {
  if (!corkable(transport)) return false;
  transport.cork();
  process.nextTick(uncork, transport);
  return true;
}

/**
 * `corkUntilNextTick` for a caller with end-of-tick work of its own: `afterUncork(owner)` runs in
 * the same `process.nextTick`, right after the uncork, so a tick's sends cost one queued callback
 * and no closure.
 */
export function corkUntilNextTickThen<T>(transport: Writable | undefined, owner: T, afterUncork: (owner: T) => void): boolean {
  if (!corkable(transport)) return false;
  transport.cork();
  process.nextTick(uncorkThen, transport, owner, afterUncork);
  return true;
}

function corkable(transport: Writable | undefined): transport is Writable {
  // Already corked this tick (ws's own cork around a frame's two buffers is undone before `send` returns).
  return transport !== undefined && !transport.destroyed && transport.writableCorked === 0;
}

function uncork(transport: Writable): void {
  // `end()` may have flushed already; uncorking a stream that is not corked does nothing.
  transport.uncork();
}

function uncorkThen<T>(transport: Writable, owner: T, afterUncork: (owner: T) => void): void {
  transport.uncork();
  afterUncork(owner);
}
