import type { HostOwnership } from "./ownership.js";

/** One process and no shared store: it owns every host, for good. */
export class SoleOwnership implements HostOwnership {
  owns(): boolean {
    return true;
  }

  fence(): number {
    return 1;
  }

  onChange(): () => void {
    return () => undefined;
  }
}
