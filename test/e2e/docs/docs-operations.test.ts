import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { AskTestClient } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { clientRepository, runShell, startGatewayShell, startShell } from "../../support/doc-shell.js";
import { docBlock, shellCommands } from "../../support/docs.js";
import { startOtlpReceiver } from "../../support/otlp-receiver.js";
import { startLoopbackRedis } from "../../support/redis-server.js";

/**
 * The operators' pages as written — docs/deployment.md, docs/inspector.md, docs/operations.md —
 * for what runs without Docker, systemd or a second machine (those are in docs-blocks.test.ts's
 * skip list; the image and nginx run in test/container/ and nginx*.test.ts): the tokens files
 * load with the gateway's own loader, the replica line serves from Redis and a Tau host, the
 * inspector lines serve the inspector and answer an approval by hand, the tracing line exports.
 */

const cleanups = cleanupsAfterEach();
const ws = (baseUrl: string) => baseUrl.replace("http://", "ws://");

describe("the tokens files shown", () => {
  const files: Array<[string, () => string]> = [
    ["docs/deployment.md", () => docBlock("docs/deployment.md", '[\n  { "id": "ci", "token": "a-long-random-secret"')],
    ["docs/inspector.md", () => docBlock("docs/inspector.md", '[\n  { "id": "ops", "sha256": ')],
  ];
  for (const [page, file] of files) {
    it(`${page}: loads, each placeholder digest a token's, and the tokens act for their tenants`, () => {
      const tokens = new Map<string, string>();
      // `<hex SHA-256 of alice's token>`: the digest of a token of that name.
      const text = file()
        .replace(/<hex SHA-256 of (.+?)'s token>/g, (_, who: string) => (tokens.set(who, `${who}-secret`), createHash("sha256").update(`${who}-secret`).digest("hex")))
        .replace('"/srv/ci"', JSON.stringify(process.cwd()));
      expect(tokens.size).toBeGreaterThan(0);
      const registry = TokenRegistry.parse(text, "tokens.json");
      const entries = JSON.parse(text) as Array<{ id: string; tenant: string; token?: string; operator?: boolean }>;
      for (const entry of entries) {
        const token = entry.token ?? tokens.get(entry.id === "ops" ? "the operator" : entry.id)!;
        expect(registry.authenticate(token), entry.id).toMatchObject({ tokenId: entry.id, tenant: entry.tenant });
      }
    });
  }
});

describe("docs/deployment.md", () => {
  it("a replica's line serves the Tau host's sessions with Redis as its store", async () => {
    const repo = clientRepository(cleanups);
    const redis = await startLoopbackRedis(cleanups);
    const host = startShell(repo, "tau-gateway host --port 0", cleanups);
    const hostUrl = (await host.waitFor("stderr", /tau host listening on (ws:\/\/\S+)/))[1]!;
    const [line, ...rest] = shellCommands(docBlock("docs/deployment.md", "TAU_GATEWAY_TOKEN=change-me tau-gateway serve --host 0.0.0.0"));
    expect(rest).toEqual([]);
    // Loopback only on a test machine; a free port; this test's host and Redis for tau-host and redis.
    const replica = line!.replace("--host 0.0.0.0", "--host 127.0.0.1").replace("--port 8080", "--port 0").replace("ws://tau-host:8787", hostUrl).replace("redis://redis:6379/0", `${redis.url}/0`);
    const gateway = await startGatewayShell(repo, replica, cleanups);
    const token = /TAU_GATEWAY_TOKEN=(\S+)/.exec(line!)![1]!;
    const client = await AskTestClient.websocket(`${ws(gateway.baseUrl)}/rpc?access_token=${token}`);
    cleanups.push(() => client.socket.close());
    const { session } = await client.request("session/create", {});
    // The session's log is in Redis, where every replica reads it.
    expect(await redis.command("KEYS", "*")).toContain(session.sessionId);
  });
});

describe("docs/inspector.md", () => {
  it("both lines serve the inspector, and the curl lines answer a pending approval by hand", async () => {
    const repo = clientRepository(cleanups);
    writeFileSync(join(repo.dir, "tools.json"), JSON.stringify({ tools: [{ name: "echo-args", description: "Prints its arguments.", parameters: { type: "object" }, command: "cat" }] }));
    const [serve, npmStart, ...rest] = shellCommands(docBlock("docs/inspector.md", "tau-gateway serve --inspector"));
    expect(rest).toEqual([]);
    // `npm start` is this checkout's `serve` (package.json); in a client repository, the bin's.
    expect(npmStart).toBe("TAU_GATEWAY_INSPECTOR=true npm start");
    const gateways = [];
    for (const line of [serve!, npmStart!.replace("npm start", "tau-gateway serve")]) {
      // The default port is 8080: a free one here, and the command tool the approval below is for.
      const gateway = await startGatewayShell(repo, `${line} --tools-config tools.json`, cleanups, { TAU_GATEWAY_PORT: "0" });
      const page = await fetch(`${gateway.baseUrl}/inspector`);
      expect(page.status, line).toBe(200);
      expect(await page.text(), line).toContain("<html");
      gateways.push(gateway);
    }

    const gateway = gateways[0]!;
    const client = await AskTestClient.websocket(`${ws(gateway.baseUrl)}/rpc`);
    cleanups.push(() => client.socket.close());
    const { session } = await client.request("session/create", {});
    await client.request("session/subscribe", { sessionId: session.sessionId });
    await client.request("session/send", { sessionId: session.sessionId, content: '/tool echo-args {"a":1}' });
    await client.waitForEvent(session.sessionId, "approval.required");
    const byHand = docBlock("docs/inspector.md", "# The same answer by hand").replaceAll("127.0.0.1:8080", gateway.baseUrl.replace("http://", ""));
    const answered = await runShell(repo, byHand, "", { SESSION: session.sessionId });
    expect(answered.code, answered.stderr).toBe(0);
    expect(JSON.parse(answered.stdout)).toMatchObject({ decided: true, decision: { interactionId: "act_1", action: "approve", scope: "once" } });
    const updated = await client.waitForEvent(session.sessionId, "approval.updated");
    expect(updated.payload).toEqual({ id: "act_1", status: "approved" });
  });
});

describe("docs/operations.md", () => {
  it("the tracing line exports the gateway's spans, named as the service it gives", async () => {
    const repo = clientRepository(cleanups);
    const collector = await startOtlpReceiver();
    cleanups.push(() => collector.close());
    const line = docBlock("docs/operations.md", "OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318");
    const service = /OTEL_SERVICE_NAME=(\S+)/.exec(line)![1]!;
    const gateway = await startGatewayShell(repo, line.replace("http://collector:4318", collector.url), cleanups, { TAU_GATEWAY_PORT: "0", OTEL_BSP_SCHEDULE_DELAY: "50" });
    const client = await AskTestClient.websocket(`${ws(gateway.baseUrl)}/rpc`);
    cleanups.push(() => client.socket.close());
    await client.request("session/create", {});
    await collector.until((spans) => spans.some((s) => JSON.stringify(s.service).includes(service)), `a span of ${service}`);
  });
});
