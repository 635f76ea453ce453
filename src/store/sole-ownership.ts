import type { HostLeases } from "./types.js";

/** One process and no shared store: it owns every host, for good. */
export class SoleOwnership implements HostLeases {
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
