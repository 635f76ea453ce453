import { randomUUID } from "node:crypto";
import { MemoryInteractionStore } from "./memory-interactions.js";
import { MemoryPlacementStore } from "./placement.js";
import { MemorySessionRoles } from "./session-roles.js";
import { SoleOwnership } from "./sole-ownership.js";
import type { GatewayStore, StoreStats } from "./types.js";

/** Nothing shared: this one process owns every Tau host and keeps its session logs, placements and interactions itself (today's behaviour). */
export class MemoryStore implements GatewayStore {
  readonly kind = "memory" as const;
  readonly replicaId = randomUUID();
  readonly ownership = new SoleOwnership();
  readonly hostSessions = undefined;
  readonly settings = undefined;
  readonly recalls = undefined;
  readonly records = undefined;
  readonly placement = new MemoryPlacementStore();
  readonly interactions = new MemoryInteractionStore();
  readonly roles = new MemorySessionRoles();
  readonly stats: StoreStats = { appends: 0, appendSeconds: 0, appendsFenced: 0, resumesRecovered: 0, resumesReset: 0 };

  sessionLog(): undefined {
    return undefined;
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}
