import { createServer } from "node:net";

/**
 * A loopback TCP port that was free a moment ago, for programs that must be told their port
 * rather than being given port 0 (nginx, the image's CMD).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
