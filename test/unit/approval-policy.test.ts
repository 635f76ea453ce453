import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { callDigest, canonicalJson } from "../../src/bridge/interactions/policy/call-digest.js";
import { compileGlob } from "../../src/bridge/interactions/policy/glob.js";
import { parseApprovalPolicy } from "../../src/bridge/interactions/policy/policy-file.js";
import { DEFAULT_POLICY, matchingRule, type PolicyCall } from "../../src/bridge/interactions/policy/policy-rules.js";
import { VoteTally } from "../../src/bridge/interactions/policy/vote-tally.js";

const TEAM = `version: 3
rules:
  - name: no-force-push
    match:
      command: "git push*"
      arguments:
        /flags: "*--force*"
    action: deny
    reason: force pushes are not allowed
  - name: leads-push
    match: { command: "git push*" }
    action: require
    approvers: { roles: [owner, controller] }
    count: 2
    deadline: 600
  - name: reads
    match: { tool: "read_*", session: { tenant: team-?, approvalMode: [on_request, plan], cwd: "/srv/*" } }
    action: allow
`;

const call = (over: Partial<PolicyCall> = {}): PolicyCall => ({
  toolName: "git",
  commandLine: "git push origin",
  arguments: {},
  session: { tenant: "team-a", approvalMode: "on_request", cwd: "/srv/repo" },
  ...over,
});

describe("globs", () => {
  it("matches stars, question marks and escapes", () => {
    expect(compileGlob("git push*").matches("git push origin main")).toBe(true);
    expect(compileGlob("git push*").matches("git pull")).toBe(false);
    expect(compileGlob("*.md").matches("docs/a.md")).toBe(true);
    expect(compileGlob("a*b*c").matches("aXbYbZc")).toBe(true);
    expect(compileGlob("a*b*c").matches("aXcYb")).toBe(false);
    expect(compileGlob("r?d").matches("red")).toBe(true);
    expect(compileGlob("r?d").matches("reed")).toBe(false);
    expect(compileGlob("\\*").matches("*")).toBe(true);
    expect(compileGlob("\\*").matches("x")).toBe(false);
    expect(compileGlob("exact").matches("exact")).toBe(true);
    expect(compileGlob("ab*ba").matches("aba")).toBe(false);
  });

  it("answers a pattern made to backtrack without trying every split", () => {
    const glob = compileGlob(`${"*a".repeat(30)}*b`);
    expect(glob.matches("a".repeat(5_000))).toBe(false);
    expect(glob.matches(`${"a".repeat(5_000)}b`)).toBe(true);
  });
});

describe("policy files", () => {
  it("reads YAML rules and decides by the first that matches", () => {
    const policy = parseApprovalPolicy(TEAM, "team.yaml");
    expect(policy.version).toBe("3");
    expect(matchingRule(policy, call({ arguments: { flags: "-q --force" } }))?.name).toBe("no-force-push");
    const push = matchingRule(policy, call());
    expect(push).toMatchObject({ name: "leads-push", action: "require", count: 2, deadlineSeconds: 600, onDeadline: "deny", approvers: { roles: ["owner", "controller"], principals: [] } });
    expect(matchingRule(policy, call({ toolName: "read_file", commandLine: "cat" }))?.name).toBe("reads");
    expect(matchingRule(policy, call({ toolName: "read_file", commandLine: "cat", session: { tenant: "team-a", approvalMode: "auto", cwd: "/srv/x" } }))).toBeUndefined();
    expect(matchingRule(policy, call({ toolName: "read_file", commandLine: "cat", session: { tenant: "team-ab", approvalMode: "plan", cwd: "/srv/x" } }))).toBeUndefined();
    expect(matchingRule(policy, call({ toolName: "read_file", commandLine: "cat", session: { tenant: "team-a", approvalMode: "plan" } }))).toBeUndefined();
    expect(matchingRule(DEFAULT_POLICY, call())).toBeUndefined();
  });

  it("matches argument values that are not strings by their JSON", () => {
    const policy = parseApprovalPolicy('{"version": 1, "rules": [{"name": "big", "match": {"arguments": {"/n": "1??", "/list/0": "x"}}, "action": "deny"}]}', "p.json");
    expect(matchingRule(policy, call({ arguments: { n: 123, list: ["x"] } }))?.name).toBe("big");
    expect(matchingRule(policy, call({ arguments: { n: 12, list: ["x"] } }))).toBeUndefined();
    expect(matchingRule(policy, call({ arguments: { n: 123 } }))).toBeUndefined();
  });

  it("refuses a bad YAML file with its line, column and reason", () => {
    const bad = TEAM.replace("action: deny", "action: refuse");
    expect(() => parseApprovalPolicy(bad, "team.yaml")).toThrow(/^team\.yaml:8:13: \/rules\/0\/action: must be one of "allow", "deny", "require"/);
    expect(() => parseApprovalPolicy("version: 1\nrules:\n  - name: a\n    action: [allow\n", "p.yaml")).toThrow(/^p\.yaml:\d+:\d+: not valid YAML/);
    expect(() => parseApprovalPolicy("version: 1\nrules:\n  - name: a\n    action: allow\n    count: 2\n", "p.yaml")).toThrow(
      /^p\.yaml:5:12: \/rules\/0\/count: only a rule whose action is "require" takes count/,
    );
    expect(() => parseApprovalPolicy("version: 1\nrules:\n  - { name: a, action: allow }\n  - { name: a, action: deny }\n", "p.yaml")).toThrow(/^p\.yaml:4:\d+: \/rules\/1\/name: rule name "a" is already used by \/rules\/0/);
    expect(() => parseApprovalPolicy("version: 1\nrules:\n  - name: a\n    action: require\n    approvers: { principals: [ann] }\n    count: 2\n", "p.yaml")).toThrow(/p\.yaml:6:12: \/rules\/0\/count: needs 2 distinct approvers/);
    // The roles a rule may name are the schema's enum (schema/approval-policy.schema.json): an editor refuses them too.
    expect(() => parseApprovalPolicy("version: 1\nrules:\n  - name: a\n    action: require\n    approvers: { roles: [owner, lead] }\n", "p.yaml")).toThrow(
      /^p\.yaml:5:33: \/rules\/0\/approvers\/roles\/1: must be one of "owner", "controller"$/,
    );
    expect(() => parseApprovalPolicy("version: 1\nrules:\n  - name: a\n    action: require\n    approvers:\n      principals: [ann]\n      roles: [observer]\n", "p.yaml")).toThrow(
      /^p\.yaml:7:15: \/rules\/0\/approvers\/roles\/0: must be one of "owner", "controller"$/,
    );
  });

  it("refuses a bad JSON file with its line and reason", () => {
    expect(() => parseApprovalPolicy('{\n  "version": 1,\n  "rules": [\n    {"name": "a", "action": "allow", "extra": 1}\n  ]\n}\n', "p.json")).toThrow(
      /^p\.json:4:47: \/rules\/0\/extra: is not an allowed field/,
    );
    expect(() => parseApprovalPolicy('{\n  "version": 1,\n  "rules": [,]\n}', "p.json")).toThrow(/^p\.json:3:\d+: not valid JSON: Unexpected token ','$/);
    expect(() => parseApprovalPolicy('{"rules": []}', "p.json")).toThrow(/^p\.json:1:1: \/version: is required$/);
  });
});

describe("a policy read for callers without a principal", () => {
  const WHY = "this gateway has no tokens (give it --tokens-file)";
  const POLICY = "version: 1\nrules:\n  - name: leads\n    action: require\n    approvers: { principals: [ana, ben] }\n  - name: owners\n    action: require\n    approvers:\n      roles: [owner]\n  - name: two\n    action: require\n    count: 2\n  - name: anyone\n    action: require\n    approvers: any\n    deadline: 30\n  - { name: runs, action: allow }\n";

  it("refuses each require rule only principals could satisfy, with its line and why", () => {
    let message = "";
    try {
      parseApprovalPolicy(POLICY, "p.yaml", { withoutPrincipals: WHY });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.split("\n")).toEqual([
      `p.yaml:5:16: /rules/0/approvers: it is decided by principals ana, ben: only callers with a token can decide it, and ${WHY}, so its calls could never be approved`,
      `p.yaml:9:7: /rules/1/approvers: it is decided by roles owner: only callers with a token can decide it, and ${WHY}, so its calls could never be approved`,
      `p.yaml:12:12: /rules/2/count: it needs 2 distinct approvers: only callers with a token can decide it, and ${WHY}, so its calls could never be approved`,
    ]);
  });

  it("reads the same policy for a gateway with tokens, and one that needs no principal without them", () => {
    expect(parseApprovalPolicy(POLICY, "p.yaml").rules.map((r) => r.name)).toEqual(["leads", "owners", "two", "anyone", "runs"]);
    const anyone = "version: 1\nrules:\n  - { name: anyone, action: require, deadline: 30 }\n";
    expect(parseApprovalPolicy(anyone, "p.yaml", { withoutPrincipals: WHY }).rules).toHaveLength(1);
  });
});

describe("a policy read for a gateway's known principals", () => {
  const POLICY = "version: 1\nrules:\n  - name: leads\n    action: require\n    approvers: { principals: [ana, ben] }\n    count: 2\n  - name: three\n    action: require\n    count: 3\n  - name: owners\n    action: require\n    approvers: { roles: [owner] }\n    count: 2\n  - { name: one-lead, action: require, approvers: { principals: [ana, zoe] } }\n";

  it("refuses each require rule needing more distinct approvers than the tokens are for, with its line and why", () => {
    let message = "";
    try {
      parseApprovalPolicy(POLICY, "p.yaml", { principals: ["ana", "carl"] });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.split("\n")).toEqual([
      "p.yaml:5:16: /rules/0/approvers: it needs 2 distinct approver(s) among principals ana, ben, and of these the tokens have only 1 (ana), so its calls could never be approved",
      "p.yaml:9:12: /rules/1/count: it needs 3 distinct approvers, and the tokens are for only 2 (ana, carl), so its calls could never be approved",
    ]);
  });

  it("reads it when the tokens have enough principals (a single --token is one)", () => {
    expect(parseApprovalPolicy(POLICY, "p.yaml", { principals: ["ana", "ben", "carl"] }).rules).toHaveLength(4);
    expect(() => parseApprovalPolicy("version: 1\nrules:\n  - { name: two, action: require, count: 2 }\n", "p.yaml", { principals: ["token"] })).toThrow(
      "p.yaml:3:42: /rules/0/count: it needs 2 distinct approvers, and the tokens are for only 1 (token), so its calls could never be approved",
    );
  });
});

describe("the policy file's schema", () => {
  it("holds the roles a rule may name as an enum", () => {
    const schema = JSON.parse(readFileSync(new URL("../../schema/approval-policy.schema.json", import.meta.url), "utf8"));
    const approvers = schema.properties.rules.items.properties.approvers.oneOf[1];
    expect(approvers.properties.roles.items.enum).toEqual(["owner", "controller"]);
  });
});

describe("call digests", () => {
  const base = { tool: "git", arguments: { b: 1, a: [1, { d: 2, c: 3 }] }, sessionId: "s1", policyVersion: "3" };

  it("is the same for the same call written in another key order", () => {
    expect(canonicalJson({ b: 1, a: [1, { d: 2, c: 3 }] })).toBe('{"a":[1,{"c":3,"d":2}],"b":1}');
    expect(callDigest(base)).toBe(callDigest({ ...base, arguments: { a: [1, { c: 3, d: 2 }], b: 1 } }));
    expect(callDigest(base)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("changes with anything in the call: tool, arguments, session or policy version", () => {
    const digest = callDigest(base);
    for (const changed of [{ tool: "git2" }, { arguments: { b: 2, a: [1, { d: 2, c: 3 }] } }, { sessionId: "s2" }, { policyVersion: "4" }]) {
      expect(callDigest({ ...base, ...changed })).not.toBe(digest);
    }
  });
});

describe("vote tallies", () => {
  it("counts distinct approvers as votes until the count is reached", () => {
    const tally = new VoteTally(2);
    expect(tally.cast({ approver: "ann", approve: true })).toEqual({ kind: "vote", have: 1, need: 2 });
    expect(tally.cast({ approver: "ann", approve: true })).toEqual({ kind: "repeat", have: 1, need: 2 });
    expect(tally.cast({ approver: "bob", approve: true })).toEqual({ kind: "decided", approved: true, approvers: ["ann", "bob"] });
    expect(tally.cast({ approver: "cid", approve: false })).toEqual({ kind: "closed" });
  });

  it("decides at the first rejection", () => {
    const tally = new VoteTally(3);
    tally.cast({ approver: "ann", approve: true });
    expect(tally.cast({ approver: "bob", approve: false })).toEqual({ kind: "decided", approved: false, approvers: ["bob"] });
    expect(tally.outcome).toBe(false);
    expect(() => new VoteTally(0)).toThrow(RangeError);
  });
});
