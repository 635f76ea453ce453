import { describe, expect, it } from "vitest";
import type { DialectRegistry } from "../../src/registry/index.js";
import { codexRegistry } from "../../src/registry/index.js";
import { readSchemaFile } from "../../src/validation/schema-files.js";
import { ProtocolValidators } from "../../src/validation/validator.js";
import { OFFICIAL_RELEASES, officialDefinition, officialMethods, officialResultName, officialSchemaDir, readOfficialSchema, type OfficialSchema } from "../support/codex-official-schema.js";
import { conformanceProblems, type Direction } from "../support/schema-conformance.js";

/**
 * The Codex dialect of the registry against the official schemas of the oldest and the newest
 * @openai/codex of the client window, 0.169.0 and 0.171.0 (the experimental bundles, which have
 * every member of the stable ones and the experimental methods the gateway serves): every entry
 * exists in each with its kind; what the gateway sends has the fields, required members, enum
 * values and union members of every release; what it accepts, those of at least one (a field
 * 0.171.0 added is taken from 0.171.0 clients, which is no problem for 0.169.0 ones).
 */

const releases = OFFICIAL_RELEASES.map((release) => ({ release, schema: readOfficialSchema("experimental", officialSchemaDir(release)) }));
const official = releases[0]!.schema;
const bundle = readSchemaFile<{ $defs: Record<string, any> }>("codex-v2.schema.json");
const schemasOf = (schema: OfficialSchema) => ({
  ours: (ref: string) => bundle.$defs[ref.replace("#/$defs/", "")],
  official: (ref: string) => officialDefinition(schema, ref.split("/").pop()!),
});
const schemas = schemasOf(official);
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

function check(schema: OfficialSchema, ourDefinition: string, officialName: string | undefined, direction: Direction): string[] {
  if (officialName === undefined) return [`${ourDefinition}: no official counterpart`];
  const ours = bundle.$defs[ourDefinition];
  const theirs = officialDefinition(schema, officialName);
  if (!ours) return [`no ${ourDefinition} in schema/codex-v2.schema.json`];
  if (!theirs) return [`no official ${officialName}`];
  return conformanceProblems(schemasOf(schema), ours, theirs, direction, ourDefinition);
}

/** What clients send, as one release's schema has it: the params of the requests, the results of the server requests. */
function receivedProblems(schema: OfficialSchema): string[] {
  const codex = ProtocolValidators.shared().get("codex");
  const requests = officialMethods(schema, "ClientRequest");
  const serverRequests = officialMethods(schema, "ServerRequest");
  return [
    ...CLIENT_REQUESTS.flatMap((method) => {
      const paramsName = requests.get(method);
      return paramsName ? check(schema, codex.method(method)!.definitions.params!, paramsName, "received") : [];
    }),
    ...SERVER_REQUESTS.flatMap((method) => check(schema, codex.method(method)!.definitions.result!, officialResultName(method, serverRequests.get(method)), "received")),
  ];
}

describe("the Codex registry", () => {
  it("serves the methods, notifications and server requests the clients need", () => {
    expect(names(codexRegistry, "request", "client")).toEqual(CLIENT_REQUESTS);
    expect(names(codexRegistry, "notification", "server")).toEqual(SERVER_NOTIFICATIONS);
    expect(names(codexRegistry, "reverse-request", "server")).toEqual(SERVER_REQUESTS);
    expect(names(codexRegistry, "notification", "client")).toEqual(["initialized"]);
  });

  it.each(releases)("names only methods of the official schema of $release, each in the direction it has there", ({ schema }) => {
    expect(CLIENT_REQUESTS.filter((m) => !officialMethods(schema, "ClientRequest").has(m))).toEqual([]);
    expect(SERVER_NOTIFICATIONS.filter((m) => !officialMethods(schema, "ServerNotification").has(m))).toEqual([]);
    expect(SERVER_REQUESTS.filter((m) => !officialMethods(schema, "ServerRequest").has(m))).toEqual([]);
    expect(officialMethods(schema, "ClientNotification").has("initialized")).toBe(true);
  });

  it("has the official fields, required members, enum values and union members in what clients of some release of the window send", () => {
    const [first, ...others] = releases.map(({ schema }) => receivedProblems(schema));
    expect(first!.filter((problem) => others.every((problems) => problems.includes(problem)))).toEqual([]);
  });

  it("takes what a 0.171.0 client sends that 0.169.0 has not (the comparison is per release)", () => {
    const [oldest, newest] = releases.map(({ schema }) => receivedProblems(schema));
    expect(oldest).toContain("ThreadListParams.includedThreadIds: not an official field");
    expect(newest).not.toContain("ThreadListParams.includedThreadIds: not an official field");
  });

  it.each(releases)("has the official fields, required members, enum values and union members of $release in what the gateway sends", ({ schema }) => {
    const codex = ProtocolValidators.shared().get("codex");
    const requests = officialMethods(schema, "ClientRequest");
    const notifications = officialMethods(schema, "ServerNotification");
    const serverRequests = officialMethods(schema, "ServerRequest");
    const problems = [
      ...CLIENT_REQUESTS.flatMap((method) => check(schema, codex.method(method)!.definitions.result!, officialResultName(method, requests.get(method)), "sent")),
      ...SERVER_NOTIFICATIONS.flatMap((method) => check(schema, codex.method(method)!.definitions.params!, notifications.get(method)!, "sent")),
      ...SERVER_REQUESTS.flatMap((method) => check(schema, codex.method(method)!.definitions.params!, serverRequests.get(method)!, "sent")),
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
