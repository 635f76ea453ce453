import { createWriteStream, readdirSync, stat, statSync, truncate, unlink, type WriteStream } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Log } from "../../shared/log.js";
import { onFirstMessage, type ConnectionRecording } from "./connection-recording.js";
import { DEFAULT_RECORD_MAX_PENDING_BYTES, RecordingBacklog } from "./recording-backlog.js";
import { headerLine, messageLines, type RecordedDialect } from "./transcript-lines.js";

/**
 * Client traffic written down for contract tests (`serve --record DIR`): one JSONL file per
 * connection, named by dialect and connection, holding every message both ways in the form
 * `tau-gateway validate` reads. Only messages are written — never a URL, a header or a token.
 *
 * Bounded twice: a file stops growing at `maxFileBytes` and the folder at `maxFolderBytes` (what
 * it held when the gateway started counts); a file is only ever cut between two lines, and each
 * cut is logged once, with the file and the limit.
 *
 * The lines waiting for the disk are bounded too, over every connection (recording-backlog.ts): a
 * slow disk cuts recordings and skips new connections, each said once, instead of growing memory.
 *
 * Failures are loud and leave files whole: a folder the gateway cannot write to is refused at
 * start; a write that fails (a full disk: ENOSPC) stops that recording, the file is truncated to
 * the lines written whole before it (removed when there are none), and it is logged once per
 * folder and kind of error, not once per connection.
 */

export const DEFAULT_RECORD_MAX_FILE_BYTES = 64 * 1024 * 1024;
export const DEFAULT_RECORD_MAX_BYTES = 1024 * 1024 * 1024;

export interface RecordingLimits {
  maxFileBytes: number;
  maxFolderBytes: number;
  /** Lines waiting for the disk, over every connection (default DEFAULT_RECORD_MAX_PENDING_BYTES). */
  maxPendingBytes?: number;
}

export type { ConnectionRecording };

/** The file system calls a recording's stream makes (node:fs's by default; a test injects failing writes). */
export type RecordingFs = NonNullable<Parameters<typeof createWriteStream>[1] & object>["fs"];

const NOT_RECORDING: ConnectionRecording = { client: () => undefined, server: () => undefined, close: () => undefined };

/**
 * One recording in a file of its own (`stdio`, `app-server`, `acp --record FILE`): replaced if it
 * exists, bounded by `maxFileBytes` alone. Resolves once the file is open.
 */
export async function recordingFile(path: string, dialect: RecordedDialect, transport: string, maxFileBytes: number, log: Log): Promise<FileRecording> {
  const backlog = new RecordingBacklog(DEFAULT_RECORD_MAX_PENDING_BYTES, log, { file: path });
  const recording = new FileRecording(path, maxFileBytes, undefined, log, headerLine({ dialect, connection: `${process.pid}-0001`, transport, started: new Date() }), "w", undefined, backlog);
  await recording.opened;
  return recording;
}

export class RecordingFolder {
  private used = 0;
  private connections = 0;
  private folderFull = false;
  private readonly open = new Set<FileRecording>();
  private readonly failuresSaid = new Set<string>();
  private readonly stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  /** One backlog for every connection of the folder (serve has one folder). */
  private readonly backlog: RecordingBacklog;

  private constructor(
    readonly dir: string,
    private readonly limits: RecordingLimits,
    private readonly log: Log,
    private readonly fs?: RecordingFs,
  ) {
    this.backlog = new RecordingBacklog(limits.maxPendingBytes ?? DEFAULT_RECORD_MAX_PENDING_BYTES, log, { dir });
  }

  /** Bytes of every recording of the folder waiting for the disk. */
  get pendingBytes(): number {
    return this.backlog.pendingBytes;
  }

  /**
   * Makes the folder if needed, checks that a file can be made in it (rejects with why not), and
   * counts what it already holds against the folder limit.
   */
  static async create(dir: string, limits: RecordingLimits, log: Log, fs?: RecordingFs): Promise<RecordingFolder> {
    await mkdir(dir, { recursive: true });
    const probe = join(dir, `.tau-gateway-probe-${process.pid}`);
    try {
      await writeFile(probe, "", { flag: "wx" });
    } catch (err) {
      throw new Error(`cannot record to ${dir}: no file can be made in it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    await rm(probe, { force: true });
    const folder = new RecordingFolder(dir, limits, log, fs);
    for (const name of readdirSync(dir)) {
      try {
        folder.used += statSync(join(dir, name)).size;
      } catch {
        // Gone meanwhile: nothing to count.
      }
    }
    return folder;
  }

  /** The recording of a new connection (`transport`: how it arrived, e.g. "websocket /rpc"). */
  connection(dialect: RecordedDialect, transport: string): ConnectionRecording {
    if (this.folderFull || !this.backlog.admits()) return NOT_RECORDING;
    const connection = `${this.stamp}-${process.pid}-${String(++this.connections).padStart(4, "0")}`;
    const path = join(this.dir, `${dialect}-${connection}.jsonl`);
    return new FileRecording(path, this.limits.maxFileBytes, this, this.log, headerLine({ dialect, connection, transport, started: new Date() }), "wx", this.fs, this.backlog);
  }

  /**
   * The recording of a connection whose file is made at its first message: an HTTP connection or
   * an event stream that carries no message (refused, or quiet until it ended) leaves no file.
   */
  connectionOnFirstMessage(dialect: RecordedDialect, transport: string): ConnectionRecording {
    return onFirstMessage(() => this.connection(dialect, transport));
  }

  /** Takes `bytes` of the folder's allowance; false (and, the first time, a log line) when it is used up. */
  take(bytes: number, path: string): boolean {
    if (this.used + bytes > this.limits.maxFolderBytes) {
      if (!this.folderFull) {
        this.folderFull = true;
        this.log("warn", "recording stopped: the recording folder reached its size limit; recordings are cut and new connections are not recorded", {
          dir: this.dir,
          file: path,
          maxBytes: this.limits.maxFolderBytes,
        });
      }
      return false;
    }
    this.used += bytes;
    return true;
  }

  /** A recording failed (its file could not be made, or written): said once per kind of error; the rest at debug. */
  failed(path: string, err: NodeJS.ErrnoException, what: string): void {
    const kind = err.code ?? err.message;
    const first = !this.failuresSaid.has(kind);
    this.failuresSaid.add(kind);
    this.log(first ? "warn" : "debug", `recording failed: ${what}${first ? "; further failures of this kind are logged at debug" : ""}`, { dir: this.dir, file: path, error: err.message });
  }

  track(recording: FileRecording): void {
    this.open.add(recording);
    void recording.finished.then(() => this.open.delete(recording));
  }

  /** Ends every recording still open and resolves once all of them are on disk. */
  async close(): Promise<void> {
    const open = [...this.open];
    for (const recording of open) recording.close();
    await Promise.all(open.map((r) => r.finished));
  }
}

export class FileRecording implements ConnectionRecording {
  private readonly stream: WriteStream;
  private written = 0;
  /** Bytes the file is known to hold whole: lines are written one call each, so this is always between two lines. */
  private onDisk = 0;
  private isOpen = false;
  private cut = false;
  private closed = false;
  /** Resolves once the file is closed (everything written is on disk). */
  readonly finished: Promise<void>;
  /** Resolves once the file is open, rejects when it cannot be. */
  readonly opened: Promise<void>;

  constructor(
    private readonly path: string,
    private readonly maxFileBytes: number,
    private readonly folder: RecordingFolder | undefined,
    private readonly log: Log,
    header: string,
    flags = "wx",
    fs?: RecordingFs,
    private readonly backlog?: RecordingBacklog,
  ) {
    this.stream = createWriteStream(path, { flags, ...(fs ? { fs } : {}) });
    this.opened = new Promise((resolve, reject) => {
      this.stream.once("open", () => resolve());
      this.stream.once("error", reject);
    });
    this.opened.catch(() => undefined);
    this.stream.once("open", () => (this.isOpen = true));
    let failure: Promise<void> = Promise.resolve();
    this.stream.on("error", (err: NodeJS.ErrnoException) => {
      if (this.cut) return;
      this.cut = true;
      if (!this.isOpen) {
        // A file of its own (recordingFile) is its owner's to report: it rejects; a folder's is the folder's to say.
        this.folder?.failed(path, err, "cannot make a recording file");
        return;
      }
      if (this.folder) this.folder.failed(path, err, "cannot write the recording file; it keeps the lines written whole before");
      else this.log("warn", "recording failed: cannot write the recording file; it keeps the lines written whole before", { file: path, error: err.message });
      failure = this.keepWholeLines();
    });
    const closed = new Promise<void>((resolve) => this.stream.once("close", () => resolve()));
    this.finished = closed.then(() => failure);
    folder?.track(this);
    this.write(header);
  }

  client(text: string): void {
    this.write(messageLines("client", text, new Date()));
  }

  server(data: string | Uint8Array): void {
    this.write(messageLines("server", typeof data === "string" ? data : Buffer.from(data).toString("utf8"), new Date()));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stream.end();
  }

  private write(lines: string): void {
    if (this.cut || this.closed) return;
    const bytes = Buffer.byteLength(lines);
    if (this.written + bytes > this.maxFileBytes) {
      this.cut = true;
      this.log("warn", "recording cut: the file reached its size limit; later messages of this connection are not recorded", {
        file: this.path,
        maxFileBytes: this.maxFileBytes,
      });
      return;
    }
    if (this.folder && !this.folder.take(bytes, this.path)) {
      this.cut = true;
      return;
    }
    if (this.backlog && !this.backlog.take(bytes, this.path)) {
      this.cut = true;
      return;
    }
    this.written += bytes;
    this.stream.write(lines, (err) => {
      this.backlog?.release(bytes);
      if (!err) this.onDisk += bytes;
    });
  }

  /** After a failed write: the file cut back to its whole lines (a partial write may have left half of one), or removed when it has none. */
  private keepWholeLines(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => resolve();
      stat(this.path, (err, stats) => {
        // Not a regular file (a pipe, /dev/full): nothing to cut back, and never anything to remove.
        if (err || !stats.isFile()) return done();
        if (this.onDisk === 0) unlink(this.path, done);
        else truncate(this.path, this.onDisk, done);
      });
    });
  }
}
