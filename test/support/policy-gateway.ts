import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { parseApprovalPolicy } from "../../src/bridge/interactions/index.js";
import { TokenRegistry } from "../../src/gateway/auth/tokens.js";
import { ECHO_TOOL } from "./echo-tool.js";
import { startTestGateway, type TestGateway } from "./gateway.js";
import { startSecureGateway, type SecureGateway } from "./secure-gateway.js";

/** A file's gateway for approval-policy tests: the echo tool, a policy and an audit folder. */
export interface PolicyGateway<G> {
  readonly gw: G;
  readonly auditDir: string;
  /** Run after the file's tests, before the gateway stops (clients the tests opened). */
  readonly closers: Array<() => unknown>;
}

/** What a policy test's gateway is started with: the echo command tool, the policy read, the audit folder. */
interface PolicySettings {
  commandTools: [typeof ECHO_TOOL];
  approvalPolicy: ReturnType<typeof parseApprovalPolicy>;
  auditDir: string;
}

/**
 * One gateway for the whole test file, started by `start` before its tests with the echo command
 * tool, `policy` (YAML) and `--audit` into a fresh folder, and stopped after them (the closers first).
 */
function gatewayForFile<G extends { stop(): Promise<void> }>(policy: string, auditPrefix: string, start: (settings: PolicySettings) => Promise<G>): PolicyGateway<G> {
  let gw: G | undefined;
  const auditDir = mkdtempSync(join(tmpdir(), auditPrefix));
  const closers: Array<() => unknown> = [];
  beforeAll(async () => {
    gw = await start({ commandTools: [ECHO_TOOL], approvalPolicy: parseApprovalPolicy(policy, "policy.yaml"), auditDir });
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await gw?.stop();
    rmSync(auditDir, { recursive: true, force: true });
  });
  return {
    get gw() {
      if (!gw) throw new Error("the gateway starts before the file's tests");
      return gw;
    },
    auditDir,
    closers,
  };
}

/** With bearer tokens for `tokens` (principal → token, all in tenant "team"). */
export function policyGatewayForFile(tokens: Record<string, string>, policy: string, auditPrefix: string): PolicyGateway<SecureGateway> {
  const registry = TokenRegistry.parse(JSON.stringify(Object.entries(tokens).map(([id, token]) => ({ id, token, tenant: "team" }))), "tokens.json");
  return gatewayForFile(policy, auditPrefix, (settings) => startSecureGateway({ tokens: registry, ...settings }));
}

/** Without tokens: no caller has a principal. */
export function openPolicyGatewayForFile(policy: string, auditPrefix: string): PolicyGateway<TestGateway> {
  return gatewayForFile(policy, auditPrefix, (settings) => startTestGateway(settings));
}
