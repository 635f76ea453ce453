import { randomUUID } from "node:crypto";
import type { GatewayStore, HostOwnership, StoreStats } from "./types.js";

/** Nothing shared: this one process owns every Tau host and keeps its session logs itself (today's behaviour). */
class SoleOwnership implements HostOwnership {
  claim(): void {}
  owns(): boolean {
    return true;
  }
  fence(): number {
    return 1;
  }
  ownedCount(): number {
    return 1;
  }
  onChange(): () => void {
    return () => undefined;
  }
}

export class MemoryStore implements GatewayStore {
  readonly kind = "memory" as const;
  readonly replicaId = randomUUID();
  readonly ownership = new SoleOwnership();
  readonly hostSessions = undefined;
  readonly stats: StoreStats = { appends: 0, appendSeconds: 0, appendsFenced: 0, resumesRecovered: 0, resumesReset: 0 };

  sessionLog(): undefined {
    return undefined;
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}
