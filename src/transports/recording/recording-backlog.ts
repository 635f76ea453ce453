import type { Log } from "../../shared/log.js";

/**
 * What every recording of a process has handed to its file streams and the disk has not taken
 * yet, bounded as a whole: a disk slower than the traffic would otherwise grow the streams'
 * buffers, and the gateway's memory, without end. A line that would pass the bound is not queued:
 * its recording is cut there (its file keeps the whole lines before it, so it stays a valid
 * transcript of the connection's start), and while the backlog is over half the bound new
 * connections are not recorded. Both are logged once per episode, and again once the disk has
 * caught up (the backlog back under half the bound).
 */

/** 32 MiB of recorded lines waiting for the disk, over every connection. */
export const DEFAULT_RECORD_MAX_PENDING_BYTES = 32 * 1024 * 1024;

export class RecordingBacklog {
  private pending = 0;
  private behind = false;

  constructor(
    readonly maxBytes: number,
    private readonly log: Log,
    private readonly where: Record<string, unknown>,
  ) {}

  /** Bytes queued and not yet on disk. */
  get pendingBytes(): number {
    return this.pending;
  }

  /** Whether a new connection may be recorded now (false, and said once, while the disk is behind). */
  admits(): boolean {
    if (this.pending <= this.maxBytes / 2) return true;
    this.fellBehind("recording skipped: the disk is behind; new connections are not recorded until it catches up");
    return false;
  }

  /** Queues `bytes` of `file`: false (the recording is to be cut) when they would pass the bound. */
  take(bytes: number, file: string): boolean {
    if (this.pending + bytes > this.maxBytes) {
      this.fellBehind("recording cut: the disk is slower than the traffic; this connection's later messages are not recorded", file);
      return false;
    }
    this.pending += bytes;
    return true;
  }

  /** `bytes` reached the disk (or failed to). */
  release(bytes: number): void {
    this.pending -= bytes;
    if (this.behind && this.pending <= this.maxBytes / 2) {
      this.behind = false;
      this.log("info", "recording resumed: the disk caught up; new connections are recorded again", { ...this.where, pendingBytes: this.pending });
    }
  }

  private fellBehind(message: string, file?: string): void {
    if (this.behind) return;
    this.behind = true;
    this.log("warn", message, { ...this.where, ...(file ? { file } : {}), pendingBytes: this.pending, maxPendingBytes: this.maxBytes });
  }
}
