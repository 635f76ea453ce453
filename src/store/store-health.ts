import { ReplyError, type Redis } from "ioredis";
import type { Log } from "../shared/log.js";
import { recordStoreUnavailable } from "./unavailable.js";

/** How long one store command may take, queued or sent, before it fails (ioredis `commandTimeout`). */
export const STORE_COMMAND_TIMEOUT_MS = 2_000;
/** How often each connection is pinged while the store is up, and retried while it is down. */
const PROBE_INTERVAL_MS = 1_000;

/**
 * Whether this replica can reach the shared store, as its own commands and a ping on each
 * connection find it. A command that fails for want of the server (timed out, connection closed,
 * retries spent — not an error the server answered) marks the store unreachable at once, so
 * `/readyz` turns 503 without a probe of its own, and the failure is named
 * (`storeUnavailableOperation`) for the caller's log and its client's error.
 *
 * A link that silently stops carrying data (a black-holed network) never closes by itself: the
 * connection still looks ready while every command waits. A probe that fails drops such a
 * connection for a fresh one; when the subscriber connection comes back, its channels tell their
 * listeners to catch up from the shared log (redis-channels.ts).
 */
export class StoreHealth {
  private down = false;
  private probing = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly connections: { commands: Redis; subscriber: Redis },
    private readonly log: Log,
  ) {
    for (const connection of Object.values(connections)) this.watch(connection);
    this.timer = setInterval(() => void this.probe(), PROBE_INTERVAL_MS);
    this.timer.unref();
  }

  get reachable(): boolean {
    return !this.down && this.connections.commands.status === "ready";
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Hears every command's failure on the connection (a pipeline's commands too: they are sent the same way). */
  private watch(connection: Redis): void {
    const send = connection.sendCommand.bind(connection);
    connection.sendCommand = (command, ...rest) => {
      const result = send(command, ...rest);
      command.promise.catch((error: unknown) => {
        if (!(error instanceof Error) || error instanceof ReplyError) return;
        recordStoreUnavailable(error, command.name);
        this.markDown(command.name, error);
      });
      return result;
    };
  }

  private async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      await this.probeOnce();
    } finally {
      this.probing = false;
    }
  }

  private async probeOnce(): Promise<void> {
    const results = await Promise.all(
      Object.entries(this.connections).map(async ([name, connection]) => {
        try {
          await connection.ping();
          return true;
        } catch {
          // Still "ready" after a failed ping: the link is stuck, not closed. Start over on a new one.
          if (connection.status === "ready") {
            this.log("warn", "store connection not answering: reconnecting", { connection: name });
            connection.disconnect(true);
          }
          return false;
        }
      }),
    );
    if (results.every(Boolean) && this.down) {
      this.down = false;
      this.log("info", "store reachable again", {});
    }
  }

  private markDown(operation: string, error: Error): void {
    if (this.down) return;
    this.down = true;
    this.log("error", "store unreachable", { operation, error: error.message });
  }
}
