import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { DEFAULT_INSPECTOR_LIMITS } from "../../../src/gateway/inspector/inspector-hub.js";
import { repoRoot } from "../../support/cli.js";

/**
 * The inspector's memory is bounded over every connection, not only per connection: 100
 * connections each at its own bound (4 MiB) used to add some 400 MB, kept after they closed. The
 * heap is measured in a process of its own, after a full garbage collection (--expose-gc).
 */

const child = fileURLToPath(new URL("../../support/inspector-heap-child.ts", import.meta.url));
const MIB = 2 ** 20;

describe("inspector memory", () => {
  it("stays within the bound over all connections, live or closed, as measured on the heap", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", "--max-old-space-size=2048", "--import", "tsx", child], { cwd: repoRoot, maxBuffer: MIB });
    const measured = JSON.parse(stdout) as { busyMiB: number; closedMiB: number; kept: { frames: number; events: number } };
    const bound = DEFAULT_INSPECTOR_LIMITS.maxTotalBytes;
    expect(measured.kept.frames).toBeLessThanOrEqual(bound);
    expect(measured.kept.events).toBeLessThanOrEqual(bound);
    // Frames for the connections and frames for resuming feeds share their strings; room for the objects around them.
    const ceilingMiB = (2 * bound) / MIB + 32;
    expect(measured.busyMiB).toBeLessThan(ceilingMiB);
    expect(measured.closedMiB).toBeLessThan(ceilingMiB);
  }, 120_000);
});
