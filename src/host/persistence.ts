import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Snapshot } from "../../generated/tau-v18.js";
import type { LineLog } from "../shared/log.js";

/** What is stored per session: the snapshot plus the host's own bookkeeping. */
export interface PersistedSession {
  format: 1;
  snapshot: Snapshot;
  /** User history entries of the current context, in order (compaction summaries are not entries). */
  historyEntryIds: string[];
}

/** Streaming produces many revisions per second; writes are coalesced over this window. */
const WRITE_DELAY_MS = 50;

/**
 * Sessions as JSON files in `<stateDir>/sessions/`, written atomically (temporary file + rename)
 * and coalesced. Without a state directory every method is a no-op and sessions live in memory.
 */
export class SessionStore {
  private readonly dir: string | undefined;
  private readonly dirty = new Map<string, () => PersistedSession>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    stateDir: string | undefined,
    private readonly log: LineLog,
  ) {
    this.dir = stateDir === undefined ? undefined : join(stateDir, "sessions");
  }

  get persistent(): boolean {
    return this.dir !== undefined;
  }

  /** Reads every stored session; unreadable files are reported and skipped. */
  async loadAll(): Promise<PersistedSession[]> {
    if (!this.dir) return [];
    await mkdir(this.dir, { recursive: true });
    const sessions: PersistedSession[] = [];
    for (const name of (await readdir(this.dir)).sort()) {
      if (!name.endsWith(".json")) continue;
      try {
        const value = JSON.parse(await readFile(join(this.dir, name), "utf8")) as PersistedSession;
        if (value?.format !== 1 || typeof value.snapshot?.sessionId !== "string" || !Array.isArray(value.historyEntryIds)) {
          throw new Error("not a stored session");
        }
        sessions.push(value);
      } catch (err) {
        this.log(`state: skipping ${name}: ${(err as Error).message}`);
      }
    }
    return sessions;
  }

  /** Marks a session for writing; `read` is called when the write happens, so the newest state is stored. */
  schedule(sessionId: string, read: () => PersistedSession): void {
    if (!this.dir) return;
    this.dirty.set(sessionId, read);
    this.timer ??= setTimeout(() => void this.flush(), WRITE_DELAY_MS);
  }

  /** Writes everything pending; resolves when it is on disk. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = [...this.dirty.entries()];
    this.dirty.clear();
    this.writing = this.writing.then(async () => {
      for (const [sessionId, read] of batch) {
        try {
          await this.write(sessionId, read());
        } catch (err) {
          this.log(`state: cannot save session ${sessionId}: ${(err as Error).message}`);
        }
      }
    });
    return this.writing;
  }

  private async write(sessionId: string, session: PersistedSession): Promise<void> {
    const dir = this.dir!;
    await mkdir(dir, { recursive: true });
    const file = join(dir, `${encodeURIComponent(sessionId)}.json`);
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, JSON.stringify(session));
    await rename(temporary, file);
  }
}
