import { describe, expect, it } from "vitest";
import { parseApprovalPolicy } from "../../src/bridge/interactions/policy/policy-file.js";
import { matchingRule, type PolicyCall } from "../../src/bridge/interactions/policy/policy-rules.js";
import { docBlock } from "../support/docs.js";

/** docs/approvals.md's worked policies decide as the page says, and its receipt has the steps it lists. */

const session = { tenant: "team", approvalMode: "auto" as const, cwd: "/srv/repo" };
const call = (toolName: string, commandLine: string, args: unknown, over: Partial<PolicyCall["session"]> = {}): PolicyCall => ({
  toolName,
  commandLine,
  arguments: args,
  session: { ...session, ...over },
});

describe("docs/approvals.md", () => {
  it("a team where only leads approve git push", () => {
    const policy = parseApprovalPolicy(docBlock("docs/approvals.md", "version: 2026-07-01"), "team.yaml");
    expect(matchingRule(policy, call("git-push", "git push", { remote: "origin", force: true }))).toMatchObject({ name: "no-force-push", action: "deny" });
    expect(matchingRule(policy, call("git-push", "git push", { remote: "origin" }))).toMatchObject({ name: "leads-push", action: "require", approvers: { principals: ["lead-ana", "lead-ben"], roles: [] }, count: 1, deadlineSeconds: 900, onDeadline: "deny" });
    expect(matchingRule(policy, call("git-status", "git status", {}))).toMatchObject({ action: "allow" });
    expect(matchingRule(policy, call("deploy", "deploy", {}))).toBeUndefined();
  });

  it("read-only observers on a shared session", () => {
    const policy = parseApprovalPolicy(docBlock("docs/approvals.md", "version: 1\nrules:\n  - name: observers-run-nothing"), "observers.yaml");
    expect(matchingRule(policy, call("git-status", "git status", {}, { tenant: "observers-eu" }))).toMatchObject({ action: "deny", reason: "this tenant only watches" });
    expect(matchingRule(policy, call("read-file", "cat", {}, { approvalMode: "plan" }))).toMatchObject({ action: "allow" });
    expect(matchingRule(policy, call("read-file", "cat", {}))).toBeUndefined();
  });

  it("the refusal and the receipt are shown as the gateway writes them", () => {
    expect(() => parseApprovalPolicy("version: 1\nrules:\n  - name: pushes\n    match: { command: 'git push*' }\n    action: ask\n", "policy.yaml")).toThrow(
      docBlock("docs/approvals.md", 'tau-gateway serve: invalid --approval-policy "policy.yaml":').split("\n")[1],
    );
    const leads = "version: 1\nrules:\n  - name: leads\n    action: require\n    approvers: { principals: [lead-ana] }\n";
    expect(() => parseApprovalPolicy(leads, "leads.yaml", { withoutPrincipals: "this gateway has no tokens (give it --tokens-file)" })).toThrow(
      docBlock("docs/approvals.md", 'tau-gateway serve: invalid --approval-policy "leads.yaml":').split("\n")[1],
    );
    const receipt = JSON.parse(docBlock("docs/approvals.md", '{"sessionId"'));
    expect(receipt.steps.map((step: { step: string }) => step.step)).toEqual(["proposed", "asked", "vote", "decided", "executed", "returned"]);
    expect(receipt.steps.find((step: { step: string }) => step.step === "executed").digest).toBe(receipt.digest);
  });
});
