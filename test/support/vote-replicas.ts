import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { AskTestClient } from "./ask-client.js";
import type { Cleanups } from "./cleanups.js";
import type { ServingCli } from "./cli.js";
import { ECHO_TOOL } from "./echo-tool.js";
import { leasesOwned, startReplicaSet, until, type ReplicaSet } from "./replica-set.js";

/**
 * Two gateway replicas sharing a redis-server for tests of votes on a consensus rule, every part a
 * real process (replica-set.ts): tokens for five principals (ann, ben, cat and dev of tenant
 * `team`, the operator ops), a policy whose rule `two-of-us` requires 2 distinct approvers among
 * ann, ben and cat for one command tool (`echo-json` unless the test brings its own tools file),
 * and an audit folder the replicas share (the replica holding a call writes its receipt). Replica A
 * starts first and holds the Tau host, so it holds the calls.
 */

export const VOTE_TOKENS = { ann: "tok-ann-replica-votes-1", ben: "tok-ben-replica-votes-2", cat: "tok-cat-replica-votes-3", ops: "tok-ops-replica-votes-4", dev: "tok-dev-replica-votes-5" };
export type Voter = keyof typeof VOTE_TOKENS;

export interface VoteReplicas {
  set: ReplicaSet;
  a: ServingCli;
  b: ServingCli;
  auditFile: string;
}

/** The replicas, with the command tool `tool` of the tools file `toolsFile` (default: echo-json) under the rule. */
export async function startVoteReplicas(cleanups: Cleanups, tools?: { file: string; tool: string }): Promise<VoteReplicas> {
  const dir = mkdtempSync(join(tmpdir(), "tau-gateway-replica-votes-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const files = { tokens: join(dir, "tokens.json"), tools: tools?.file ?? join(dir, "tools.json"), policy: join(dir, "policy.yaml"), audit: join(dir, "audit") };
  writeFileSync(
    files.tokens,
    JSON.stringify([
      ...(["ann", "ben", "cat", "dev"] as const).map((id) => ({ id, token: VOTE_TOKENS[id], tenant: "team" })),
      { id: "ops", token: VOTE_TOKENS.ops, tenant: "operations", operator: true },
    ]),
  );
  if (!tools) writeFileSync(files.tools, JSON.stringify({ tools: [ECHO_TOOL] }));
  writeFileSync(
    files.policy,
    `version: replica-votes-1
rules:
  - name: two-of-us
    match: { tool: ${tools?.tool ?? ECHO_TOOL.name} }
    action: require
    approvers: { principals: [ann, ben, cat] }
    count: 2
`,
  );
  const serveArgs = ["--tokens-file", files.tokens, "--tools-config", files.tools, "--approval-policy", files.policy, "--audit", files.audit];
  const set = await startReplicaSet(cleanups, { replicas: 2, serveArgs, metricsToken: VOTE_TOKENS.ops });
  const [a, b] = set.replicas as [ServingCli, ServingCli];
  expect([await leasesOwned(a, VOTE_TOKENS.ops), await leasesOwned(b, VOTE_TOKENS.ops)]).toEqual([1, 0]);
  return { set, a, b, auditFile: join(files.audit, "audit.jsonl") };
}

/** An initialized Ask client of `who` on the replica's WebSocket /rpc, closed after the test. */
export async function voterOn(replica: ServingCli, who: Voter, cleanups: Cleanups): Promise<AskTestClient> {
  const ask = await AskTestClient.websocket(`${replica.baseUrl.replace("http://", "ws://")}/rpc`, { headers: { authorization: `Bearer ${VOTE_TOKENS[who]}` } });
  cleanups.push(() => ask.socket.terminate());
  // A replica killed under the client resets the connection; what the tests look at is what arrived.
  ask.socket.on("error", () => undefined);
  await ask.request("initialize", { client: { name: `replica-votes-${who}`, version: "1" } });
  return ask;
}

/** A session of `owner`'s, subscribed by every client; the turn `content` (calling the tool), once every client sees its approval. */
export async function approvalOnEveryReplica(owner: AskTestClient, others: AskTestClient[], content: string) {
  const { session } = await owner.request("session/create", {});
  const sessionId = session.sessionId as string;
  for (const c of [owner, ...others]) await c.request("session/subscribe", { sessionId });
  const { turnId } = await owner.request("session/send", { sessionId, content });
  for (const c of [owner, ...others]) await c.waitForEvent(sessionId, "approval.required");
  return { sessionId, turnId: turnId as string };
}

/** The receipt of the session's call matching `which` (default: any) in the audit file, once it is written. */
export function auditedReceipt(auditFile: string, sessionId: string, which: (receipt: any) => boolean = () => true): Promise<any> {
  return until(() => {
    if (!existsSync(auditFile)) return undefined;
    const lines = readFileSync(auditFile, "utf8").split("\n").filter(Boolean);
    return lines.map((line) => JSON.parse(line)).find((receipt) => receipt.sessionId === sessionId && which(receipt));
  }, "the call's receipt in the audit file");
}

/** A receipt's steps without their times. */
export const receiptSteps = (receipt: { steps: Array<Record<string, unknown>> }) => receipt.steps.map(({ at: _at, ...step }) => step);

/** The approvers of a receipt's votes, in order. */
export const voteApprovers = (receipt: { steps: Array<Record<string, unknown>> }) => receipt.steps.filter((s) => s.step === "vote").map((s) => s.approver as string);

/** The ids interaction/list answers, through `c`'s replica. */
export const listedInteractions = async (c: AskTestClient, sessionId: string) => ((await c.request("interaction/list", { sessionId })).interactions as Array<{ id: string }>).map((i) => i.id);
