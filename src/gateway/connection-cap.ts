/**
 * The gateway-wide cap on long-lived client connections (WebSocket, and any streaming route that
 * takes a slot). Refusing before the upgrade, with HTTP 503, costs the gateway nothing and tells
 * clients and proxies plainly to come back later; a slot is held until its connection closes.
 */
export class ConnectionCap {
  private open = 0;

  constructor(readonly max: number) {}

  get count(): number {
    return this.open;
  }

  /** Takes a slot; returns the function that gives it back (idempotent), or undefined when none is free. */
  acquire(): (() => void) | undefined {
    if (this.open >= this.max) return undefined;
    this.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
    };
  }
}

export function connectionLimitMessage(max: number): string {
  return `the gateway has reached its limit of ${max} open connections; retry later`;
}
