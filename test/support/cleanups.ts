import { afterEach } from "vitest";

export type Cleanup = () => Promise<unknown> | unknown;

/**
 * Teardown steps a test registers as it creates servers, clients, processes and directories; they
 * run newest first, so whatever was started last (a client) goes before what it depends on (its
 * server).
 */
export class Cleanups {
  private readonly steps: Cleanup[] = [];

  push(step: Cleanup): void {
    this.steps.push(step);
  }

  /** Waits for something being started and registers its `stop()`. */
  async stopAfterTest<T extends { stop(): Promise<unknown> }>(starting: Promise<T>): Promise<T> {
    const started = await starting;
    this.push(() => started.stop());
    return started;
  }

  async runNewestFirst(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) await step();
  }
}

/** The cleanups of a test file, run after each of its tests. Call once, at the file's top level. */
export function cleanupsAfterEach(): Cleanups {
  const cleanups = new Cleanups();
  afterEach(() => cleanups.runNewestFirst());
  return cleanups;
}
