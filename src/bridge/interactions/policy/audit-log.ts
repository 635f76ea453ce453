import { mkdir, appendFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Log } from "../../../shared/log.js";
import { errorText } from "../../../shared/unknown-values.js";

/**
 * `--audit DIR`: the approvals' receipts as JSON lines, one receipt a line, in `DIR/audit.jsonl`.
 * When that file would pass `maxFileBytes` it becomes `audit.1.jsonl` (the older ones move up one,
 * and the one past `maxFiles` is deleted), so the folder never holds more than about
 * `maxFiles × maxFileBytes`. Writing never blocks the event loop: lines are queued (at most
 * `maxQueuedBytes`; past it a line is dropped and counted) and written by one chain of
 * asynchronous appends. A write that fails is logged once, its line is lost, and the gateway goes on.
 */

export interface AuditLogOptions {
  dir: string;
  maxFileBytes?: number;
  /** Rotated files kept besides the current one. */
  maxFiles?: number;
  maxQueuedBytes?: number;
  log?: Log;
}

export const DEFAULT_AUDIT_FILE_BYTES = 16 * 1024 * 1024;
export const DEFAULT_AUDIT_FILES = 5;
const DEFAULT_QUEUED_BYTES = 8 * 1024 * 1024;

export const auditFileName = (generation: number) => (generation === 0 ? "audit.jsonl" : `audit.${generation}.jsonl`);

export class AuditLog {
  private readonly maxFileBytes: number;
  private readonly maxFiles: number;
  private readonly maxQueuedBytes: number;
  private queue: string[] = [];
  private queuedBytes = 0;
  private size: number | undefined;
  private writing: Promise<void> | undefined;
  private failed = false;
  /** Lines dropped because too much was queued, or lost to a failed write. */
  dropped = 0;

  constructor(private readonly options: AuditLogOptions) {
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_AUDIT_FILE_BYTES;
    this.maxFiles = options.maxFiles ?? DEFAULT_AUDIT_FILES;
    this.maxQueuedBytes = options.maxQueuedBytes ?? DEFAULT_QUEUED_BYTES;
  }

  /** Queues one record as a line; returns at once. */
  write(record: object): void {
    const line = `${JSON.stringify(record)}\n`;
    const bytes = Buffer.byteLength(line);
    if (this.queuedBytes + bytes > this.maxQueuedBytes) {
      this.dropped++;
      return;
    }
    this.queue.push(line);
    this.queuedBytes += bytes;
    this.writing ??= this.drain().finally(() => (this.writing = undefined));
  }

  /** Resolves once every line queued so far is written (or lost). */
  async flushed(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    const { dir } = this.options;
    while (this.queue.length > 0) {
      const lines = this.queue;
      this.queue = [];
      this.queuedBytes = 0;
      try {
        if (this.size === undefined) {
          await mkdir(dir, { recursive: true });
          this.size = await stat(join(dir, auditFileName(0))).then((s) => s.size, () => 0);
        }
        // Whole lines per file: a batch is cut where the next line would pass the bound.
        let batch = "";
        for (const line of lines) {
          const bytes = Buffer.byteLength(line);
          if (this.size + Buffer.byteLength(batch) + bytes > this.maxFileBytes && this.size + batch.length > 0) {
            await this.append(batch);
            await this.rotate();
            batch = "";
          }
          batch += line;
        }
        if (batch) await this.append(batch);
      } catch (error) {
        this.dropped += lines.length;
        this.size = undefined;
        if (!this.failed) {
          this.failed = true;
          this.options.log?.("error", "writing the approval audit failed; receipts are not written until it works again (logged once)", { dir, error: errorText(error) });
        }
      }
    }
  }

  private async append(text: string): Promise<void> {
    if (!text) return;
    await appendFile(join(this.options.dir, auditFileName(0)), text);
    this.size! += Buffer.byteLength(text);
  }

  private async rotate(): Promise<void> {
    const { dir } = this.options;
    // The oldest kept would pass the count: it goes, and every other moves up one.
    await rm(join(dir, auditFileName(this.maxFiles)), { force: true });
    for (let generation = this.maxFiles - 1; generation >= 0; generation--) {
      await rename(join(dir, auditFileName(generation)), join(dir, auditFileName(generation + 1))).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
    }
    this.size = 0;
  }
}
