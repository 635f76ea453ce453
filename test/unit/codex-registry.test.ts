import { describe, expect, it } from "vitest";
import type { DialectRegistry } from "../../src/registry/index.js";
import { codexRegistry } from "../../src/registry/index.js";
import { readSchemaFile } from "../../src/validation/schema-files.js";
import { ProtocolValidators } from "../../src/validation/validator.js";
import { officialDefinition, officialMethods, officialResultName, readOfficialSchema } from "../support/codex-official-schema.js";
import { conformanceProblems, type Direction } from "../support/schema-conformance.js";

/**
 * The Codex dialect of the registry against the official schema of @openai/codex 0.169.0 (the
 * experimental bundle, which has every member of the stable one and the experimental methods the
 * gateway serves): every entry exists there with its kind, and the fields, required members, enum
 * values and union members the registry states are the official ones.
 */

const official = readOfficialSchema("experimental");
const bundle = readSchemaFile<{ $defs: Record<string, any> }>("codex-v2.schema.json");
const schemas = {
  ours: (ref: string) => bundle.$defs[ref.replace("#/$defs/", "")],
  official: (ref: string) => officialDefinition(official, ref.split("/").pop()!),
};
const names = (registry: DialectRegistry, kind: string, sender: string) =>
  [...registry.methods, ...registry.notifications].filter((e) => e.kind === kind && e.sender === sender).map((e) => e.name);

const CLIENT_REQUESTS = [
  "initialize", "account/read", "model/list", "config/read", "configRequirements/read", "collaborationMode/list",
  "permissionProfile/list", "skills/list", "hooks/list", "plugin/installed", "account/bedrock/checkGovCloudRequirements",
  "thread/start", "thread/resume", "thread/read", "thread/list", "thread/turns/list", "thread/loaded/list", "turn/start", "turn/steer", "turn/interrupt",
];
const SERVER_NOTIFICATIONS = [
  "thread/started", "thread/status/changed", "thread/settings/updated", "turn/started", "turn/completed", "item/started", "item/completed",
  "item/agentMessage/delta", "item/reasoning/summaryTextDelta", "item/reasoning/summaryPartAdded", "item/reasoning/textDelta",
  "item/commandExecution/outputDelta", "turn/plan/updated", "thread/tokenUsage/updated", "serverRequest/resolved", "error",
];
const SERVER_REQUESTS = ["item/commandExecution/requestApproval", "item/tool/requestUserInput", "item/tool/call"];

function check(ourDefinition: string, officialName: string | undefined, direction: Direction): string[] {
  if (officialName === undefined) return [`${ourDefinition}: no official counterpart`];
  const ours = bundle.$defs[ourDefinition];
  const theirs = officialDefinition(official, officialName);
  if (!ours) return [`no ${ourDefinition} in schema/codex-v2.schema.json`];
  if (!theirs) return [`no official ${officialName}`];
  return conformanceProblems(schemas, ours, theirs, direction, ourDefinition);
}

describe("the Codex registry", () => {
  it("serves the methods, notifications and server requests the clients need", () => {
    expect(names(codexRegistry, "request", "client")).toEqual(CLIENT_REQUESTS);
    expect(names(codexRegistry, "notification", "server")).toEqual(SERVER_NOTIFICATIONS);
    expect(names(codexRegistry, "reverse-request", "server")).toEqual(SERVER_REQUESTS);
    expect(names(codexRegistry, "notification", "client")).toEqual(["initialized"]);
  });

  it("names only methods of the official schema, each in the direction it has there", () => {
    expect(CLIENT_REQUESTS.filter((m) => !officialMethods(official, "ClientRequest").has(m))).toEqual([]);
    expect(SERVER_NOTIFICATIONS.filter((m) => !officialMethods(official, "ServerNotification").has(m))).toEqual([]);
    expect(SERVER_REQUESTS.filter((m) => !officialMethods(official, "ServerRequest").has(m))).toEqual([]);
    expect(officialMethods(official, "ClientNotification").has("initialized")).toBe(true);
  });

  it("has the official fields, required members, enum values and union members in what clients send", () => {
    const requests = officialMethods(official, "ClientRequest");
    const problems = CLIENT_REQUESTS.flatMap((method) => {
      const paramsName = requests.get(method);
      return paramsName ? check(ProtocolValidators.shared().get("codex").method(method)!.definitions.params!, paramsName, "received") : [];
    });
    // Server requests' answers come from clients too.
    const serverRequests = officialMethods(official, "ServerRequest");
    for (const method of SERVER_REQUESTS) {
      problems.push(...check(ProtocolValidators.shared().get("codex").method(method)!.definitions.result!, officialResultName(method, serverRequests.get(method)), "received"));
    }
    expect(problems).toEqual([]);
  });

  it("has the official fields, required members, enum values and union members in what the gateway sends", () => {
    const codex = ProtocolValidators.shared().get("codex");
    const requests = officialMethods(official, "ClientRequest");
    const notifications = officialMethods(official, "ServerNotification");
    const serverRequests = officialMethods(official, "ServerRequest");
    const problems = [
      ...CLIENT_REQUESTS.flatMap((method) => check(codex.method(method)!.definitions.result!, officialResultName(method, requests.get(method)), "sent")),
      ...SERVER_NOTIFICATIONS.flatMap((method) => check(codex.method(method)!.definitions.params!, notifications.get(method)!, "sent")),
      ...SERVER_REQUESTS.flatMap((method) => check(codex.method(method)!.definitions.params!, serverRequests.get(method)!, "sent")),
    ];
    expect(problems).toEqual([]);
  });

  it("tells a field the official schema lacks, a changed enum and a missing required member apart (the comparison can fail)", () => {
    const theirs = officialDefinition(official, "TurnPlanStep");
    const wrong = { type: "object", properties: { step: { type: "string" }, state: { type: "string" }, status: { type: "string", enum: ["pending", "done"] } }, required: ["step"] };
    expect(conformanceProblems(schemas, wrong, theirs, "sent", "TurnPlanStep")).toEqual([
      "TurnPlanStep.state: not an official field",
      'TurnPlanStep.status: enum ["pending","done"] is not the official ["pending","inProgress","completed"]',
      "TurnPlanStep.status: required officially, optional here",
    ]);
  });

  it("accepts the recorded client messages of the reference digest", () => {
    const codex = ProtocolValidators.shared().get("codex");
    const messages = [
      { id: "initialize", method: "initialize", params: { clientInfo: { name: "codex-tui", title: null, version: "0.169.0" }, capabilities: { requiredHumanApproval: true, experimentalApi: true, requestAttestation: false, optOutNotificationMethods: null } } },
      { method: "initialized" },
      { id: 1, method: "account/read", params: {} },
      { id: 2, method: "model/list", params: { includeHidden: true } },
      { id: 7, method: "thread/start", params: { cwd: "/home/user/proj", approvalPolicy: "on-request", sandbox: "workspace-write" } },
      { id: 8, method: "thread/start", params: { approvalPolicy: "on-failure" } },
      { id: 12, method: "turn/start", params: { threadId: "thr-1", input: [{ type: "text", text: "list the files", text_elements: [] }] } },
      { id: 0, result: { decision: "accept" } },
    ];
    const verdicts = messages.slice(0, -1).map((m) => codex.message("client", m));
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
    expect(codex.message("client", messages.at(-1), "item/commandExecution/requestApproval").ok).toBe(true);
    expect(codex.message("client", { id: 0, result: { decision: "maybe" } }, "item/commandExecution/requestApproval").ok).toBe(false);
  });
});
