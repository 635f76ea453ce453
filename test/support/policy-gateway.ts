import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { parseApprovalPolicy } from "../../src/bridge/interactions/index.js";
import { TokenRegistry } from "../../src/gateway/auth/tokens.js";
import { ECHO_TOOL } from "./echo-tool.js";
import { startSecureGateway, type SecureGateway } from "./secure-gateway.js";
import { startTestGateway, type TestGateway } from "./gateway.js";

/** A file's gateway for approval-policy tests: its principals, the echo tool, a policy and an audit folder. */
export interface PolicyGateway {
  readonly gw: SecureGateway;
  readonly auditDir: string;
  /** Run after the file's tests, before the gateway stops (clients the tests opened). */
  readonly closers: Array<() => unknown>;
}

/**
 * One gateway for the whole test file, started before its tests with bearer tokens for
 * `tokens` (principal → token, all in tenant "team"), the echo command tool, `policy` (YAML) and
 * `--audit` into a fresh folder, and stopped after them.
 */
export function policyGatewayForFile(tokens: Record<string, string>, policy: string, auditPrefix: string): PolicyGateway {
  let gw: SecureGateway | undefined;
  const auditDir = mkdtempSync(join(tmpdir(), auditPrefix));
  const closers: Array<() => unknown> = [];
  beforeAll(async () => {
    const registry = TokenRegistry.parse(JSON.stringify(Object.entries(tokens).map(([id, token]) => ({ id, token, tenant: "team" }))), "tokens.json");
    gw = await startSecureGateway({ tokens: registry, commandTools: [ECHO_TOOL], approvalPolicy: parseApprovalPolicy(policy, "policy.yaml"), auditDir });
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

/** A file's gateway without tokens (no principals) for approval-policy tests: the echo tool, a policy and an audit folder. */
export interface OpenPolicyGateway {
  readonly gw: TestGateway;
  readonly auditDir: string;
}

/** One tokenless gateway for the whole test file with the echo command tool, `policy` (YAML) and `--audit` into a fresh folder. */
export function openPolicyGatewayForFile(policy: string, auditPrefix: string): OpenPolicyGateway {
  let gw: TestGateway | undefined;
  const auditDir = mkdtempSync(join(tmpdir(), auditPrefix));
  beforeAll(async () => {
    gw = await startTestGateway({ commandTools: [ECHO_TOOL], approvalPolicy: parseApprovalPolicy(policy, "policy.yaml"), auditDir });
  });
  afterAll(async () => {
    await gw?.stop();
    rmSync(auditDir, { recursive: true, force: true });
  });
  return {
    get gw() {
      if (!gw) throw new Error("the gateway starts before the file's tests");
      return gw;
    },
    auditDir,
  };
}
