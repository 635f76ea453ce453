import { afterEach } from "vitest";
import { interopRun, type InteropRun } from "./gateway-process.js";
import { startServe, type ServeGateway } from "./gateway-servers.js";

/** What one interop test starts, all of it stopped after the test. */
export interface InteropTest {
  /** A fresh work folder, tools file and transcript for the test (interopRun). */
  newRun(): InteropRun;
  /** `tau-gateway serve` for the test (startServe). */
  serve(args: string[], env: Record<string, string>): Promise<ServeGateway>;
  /** More to stop after the test (clients, terminal UIs), newest first. */
  readonly stops: Array<() => unknown>;
}

/**
 * For a file whose tests each start their own run and gateway: after each test, what it pushed on
 * `stops` is stopped (newest first), then its gateway, then its run's folder removed.
 */
export function interopEachTest(): InteropTest {
  let run: InteropRun | undefined;
  let gateway: ServeGateway | undefined;
  const stops: Array<() => unknown> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
    await gateway?.kill();
    gateway = undefined;
    run?.cleanup();
    run = undefined;
  });
  return {
    stops,
    newRun: () => (run = interopRun()),
    serve: async (args, env) => (gateway = await startServe(args, env)),
  };
}
