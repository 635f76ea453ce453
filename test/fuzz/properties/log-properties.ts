import WebSocket from "ws";
import type { RunProperty } from "../target.js";

/** Frames that are not UTF-8, on fresh connections to a WebSocket route of the gateway. */
const FRAMES = 50;
/** Log bytes one such frame may cost: one short line at most. */
const BYTES_PER_FRAME = 400;

/** A client that sends text that is not UTF-8 is worth at most a short line, never a stack trace. */
export function invalidUtf8Logging(path: string): RunProperty {
  return {
    checks: `${FRAMES} invalid UTF-8 frames on ${path} cost at most ${BYTES_PER_FRAME} log bytes each, and no stack trace`,
    async run(target) {
      const before = target.gateway.stderrBytes;
      for (let i = 0; i < FRAMES; i++) {
        const socket = new WebSocket(`${target.baseUrl!.replace("http://", "ws://")}${path}`);
        await new Promise<void>((resolve) => {
          socket.on("error", () => undefined);
          socket.once("open", () => socket.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false }));
          socket.once("close", () => resolve());
        });
      }
      // Log lines are written asynchronously: give the last ones a moment.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const written = target.gateway.stderrBytes - before;
      const problems: string[] = [];
      if (written > FRAMES * BYTES_PER_FRAME) problems.push(`${FRAMES} invalid UTF-8 frames produced ${written} bytes of log`);
      if (/\n\s+at \S/.test(target.gateway.stderr())) problems.push("the log contains stack traces");
      return problems;
    },
  };
}
