import { chmodSync, lstatSync, mkdirSync, unlinkSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { dirname, resolve } from "node:path";
import type { NdjsonStream } from "./ndjson-stream.js";

/**
 * A Unix-socket listener for local clients that attach to a running process, each client an
 * NDJSON stream of its own (whatever the dialect: `serve` says how to serve one). As Ask hosts do:
 * a stale socket file left by a process that died is replaced on start (one that still answers is
 * not: that process is alive), the file gets `mode` (who may connect is decided by the file
 * mode: the socket has no other authentication), and the file is removed on stop.
 */

export interface UnixSocketListenerOptions {
  path: string;
  /** File mode of the socket, e.g. 0o600: only the owner may connect. */
  mode: number;
  /** Clients connected at once; one more is disconnected at once and `onRefused` is told. */
  maxConnections?: number;
  onRefused?(): void;
  /** Serves one client; the listener ends the stream when the client is done, or on close(). */
  serve(socket: Socket): NdjsonStream;
}

/** How long a client that ended its input has for the answers it is still owed to go out, once they are all written. */
const FLUSH_GRACE_MS = 1000;

export class UnixSocketListener {
  private readonly clients = new Map<NdjsonStream, Socket>();
  private accepting = true;
  private stopped: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private wakeOnClose!: () => void;
  /** Settles when close() starts: clients still finishing their work stop waiting for it. */
  private readonly closeStarted = new Promise<void>((resolve) => (this.wakeOnClose = resolve));

  private constructor(
    readonly path: string,
    private readonly server: Server,
    /** The socket file this listener bound (device and inode), so stop never removes another process's. */
    private readonly file: { dev: number; ino: number },
  ) {}

  /** Binds `options.path` (replacing a stale socket file) and starts accepting clients. */
  static async listen(options: UnixSocketListenerOptions): Promise<UnixSocketListener> {
    const path = resolve(options.path);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    await removeStaleSocket(path);
    // Half-open: a client may end its side after its last request and still read the answers.
    const server = createServer({ allowHalfOpen: true });
    if (options.maxConnections !== undefined) server.maxConnections = options.maxConnections;
    await bind(server, path, options.mode);
    chmodSync(path, options.mode);
    const { dev, ino } = lstatSync(path);
    const listener = new UnixSocketListener(path, server, { dev, ino });
    server.on("connection", (socket) => listener.accept(socket, options));
    server.on("drop", () => options.onRefused?.());
    return listener;
  }

  /** Clients connected now. */
  get connections(): number {
    return this.clients.size;
  }

  /** Stops accepting clients and removes the socket file; connected clients are served on. */
  stopAccepting(): Promise<void> {
    this.accepting = false;
    this.stopped ??= new Promise<void>((resolve) => this.server.close(() => resolve())).then(() => this.removeOwnFile());
    return this.stopped;
  }

  /** Stops accepting, then closes every client (see NdjsonStream.close for `graceMs`); resolves once all are gone. */
  close(graceMs = FLUSH_GRACE_MS): Promise<void> {
    this.closing ??= (async () => {
      this.wakeOnClose();
      const stopped = this.stopAccepting();
      await Promise.all([...this.clients].map(([stream, socket]) => stream.close(graceMs).then(() => socket.destroy())));
      await stopped;
    })();
    return this.closing;
  }

  private accept(socket: Socket, options: UnixSocketListenerOptions): void {
    if (!this.accepting) return void socket.destroy();
    const stream = options.serve(socket);
    this.clients.set(stream, socket);
    void stream.ended.then(async (end) => {
      // A client that ended its input still gets the answers it is owed; one that is gone does not.
      if (end === "input ended") await Promise.race([stream.whenSettled(), this.closeStarted]);
      await stream.close(end === "input ended" ? FLUSH_GRACE_MS : 0);
      socket.destroy();
      this.clients.delete(stream);
    });
  }

  private removeOwnFile(): void {
    try {
      const { dev, ino } = lstatSync(this.path);
      if (dev === this.file.dev && ino === this.file.ino) unlinkSync(this.path);
    } catch {
      // Already gone (closing the server removes it): nothing to do.
    }
  }
}

/** Listens on `path` with the socket file created as `mode` from the start (no moment with wider permissions). */
function bind(server: Server, path: string, mode: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    let previousMask: number | undefined;
    try {
      // The file is created by bind(2) within listen(), under the process umask.
      previousMask = process.umask(0o777 & ~mode);
    } catch {
      // Worker threads may not change the umask; the chmod after listening still applies the mode.
    }
    try {
      server.listen(path, () => {
        server.off("error", reject);
        resolve();
      });
    } finally {
      if (previousMask !== undefined) process.umask(previousMask);
    }
  });
}

/** Removes a socket file nobody listens on; refuses a file that is not a socket, or a socket that answers. */
async function removeStaleSocket(path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  if (!isSocket) throw new Error(`${path} exists and is not a socket; not replacing it`);
  if (await someoneListens(path)) {
    throw Object.assign(new Error(`another process is already listening on ${path}`), { code: "EADDRINUSE" });
  }
  unlinkSync(path);
}

function someoneListens(path: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ECONNREFUSED" || err.code === "ENOENT") resolve(false);
      else reject(err);
    });
  });
}
