import { createServer } from "node:net";

/**
 * A loopback TCP port that was free a moment ago, for nginx, which must be told its port rather
 * than being given port 0. The benchmarks own this copy: they are a program of their own and do
 * not depend on the test suite's support code.
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
