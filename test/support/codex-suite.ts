import { afterAll, afterEach, beforeAll, expect } from "vitest";
import type { CommandToolConfig } from "../../src/bridge/interactions/index.js";
import type { CodexTestClient } from "./codex-client.js";
import { startTestGateway, type TestGateway } from "./gateway.js";

export interface CodexSuite {
  /** The file's gateway (started before its first test). */
  readonly gateway: TestGateway;
  /** A new Codex client on WebSocket `/`, checked after the test. */
  client(): Promise<CodexTestClient>;
  /** Initializes `c` and starts a thread in the gateway's directory with `params`; its id. */
  startedThread(c: CodexTestClient, params?: Record<string, unknown>): Promise<string>;
}

/**
 * The set-up of a test file about the Codex dialect: one gateway (embedded Tau host) with
 * `commandTools` for the whole file, clients made per test, and after each test the check that
 * every message each of them received is valid against Codex's own schema. Call at the top level.
 */
export function codexSuite(commandTools: CommandToolConfig[]): CodexSuite {
  let gateway: TestGateway | undefined;
  const clients: CodexTestClient[] = [];
  beforeAll(async () => {
    gateway = await startTestGateway({ commandTools });
  });
  afterAll(() => gateway?.stop());
  afterEach(() => {
    const invalid = clients.splice(0).flatMap((c) => c.invalid);
    expect(invalid).toEqual([]);
  });
  const started = (): TestGateway => {
    if (!gateway) throw new Error("the gateway starts before the file's first test: use it inside a test");
    return gateway;
  };
  return {
    get gateway() {
      return started();
    },
    async client() {
      const c = await started().codexClient();
      clients.push(c);
      return c;
    },
    async startedThread(c, params = {}) {
      await c.initialize();
      const result = await c.request("thread/start", { cwd: started().cwd, ...params });
      return result.thread.id as string;
    },
  };
}
