import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type {
  Event,
  InteractionRequestPermissionParams,
  InteractionRequestPermissionResult,
  InteractionRequestUserInputParams,
  InteractionRequestUserInputResult,
} from "../../../generated/ask-v1.0.js";
import type { ClientRequests, Snapshot, UserTurnResult } from "../../../generated/tau-v18.js";
import {
  askJoiningClient,
  gatewayClientTools,
  InteractionError,
  SessionInteractions,
  type ApprovalModeName,
  type CommandToolConfig,
  type PlanApprovalParams,
  type PlanApprovalResult,
  type ReverseRequester,
} from "../../../src/bridge/interactions/index.js";
import { SessionHub } from "../../../src/bridge/session-hub.js";
import { startTauHost, type RunningTauHost } from "../../../src/host/index.js";
import { TauUpstream } from "../../../src/tau/upstream.js";
import { ProtocolValidators } from "../../../src/validation/validator.js";

/**
 * Interactions end to end: the embedded Tau host's scripted agent calls the gateway's client tools
 * (`/tool NAME JSON`) over a real TauUpstream connection; a real SessionHub records the events.
 * The only stand-in is the ReverseRequester, which in the product is a client connection of the
 * Ask surface: here each test scripts its answers.
 */

const ask = ProtocolValidators.shared().get("ask");

const echoArgs: CommandToolConfig = {
  name: "echo-args",
  description: "Prints the JSON arguments it was given.",
  parameters: { type: "object", properties: { a: { type: "integer" } }, required: ["a"], additionalProperties: false },
  command: "cat",
};
const failing: CommandToolConfig = {
  name: "failing",
  description: "Reads its arguments, complains and exits 3.",
  parameters: { type: "object" },
  command: "sh",
  args: ["-c", "cat; echo; echo broken >&2; exit 3"],
};
const slow: CommandToolConfig = {
  name: "slow",
  description: "Takes far longer than any test waits.",
  parameters: { type: "object" },
  command: "sleep",
  args: ["30"],
};
const COMMAND_TOOLS = [echoArgs, failing, slow];

type PermissionAnswer = InteractionRequestPermissionResult | undefined | Promise<InteractionRequestPermissionResult | undefined>;
type InputAnswer = InteractionRequestUserInputResult | undefined | Promise<InteractionRequestUserInputResult | undefined>;

/** Scripted client answers to reverse requests; records what it was asked and with which signal. */
class ScriptedReverse implements ReverseRequester {
  permission: (params: InteractionRequestPermissionParams) => PermissionAnswer = () => undefined;
  userInput: (params: InteractionRequestUserInputParams) => InputAnswer = () => undefined;
  readonly permissionRequests: Array<{ params: InteractionRequestPermissionParams; signal: AbortSignal; answer: Promise<unknown> }> = [];
  readonly userInputRequests: Array<{ params: InteractionRequestUserInputParams; signal: AbortSignal; answer: Promise<unknown> }> = [];

  requestPermission(_sessionId: string, params: InteractionRequestPermissionParams, signal: AbortSignal) {
    const answer = Promise.resolve(this.permission(params));
    this.permissionRequests.push({ params, signal, answer });
    return answer;
  }

  requestUserInput(_sessionId: string, params: InteractionRequestUserInputParams, signal: AbortSignal) {
    const answer = Promise.resolve(this.userInput(params));
    this.userInputRequests.push({ params, signal, answer });
    return answer;
  }

  plan: (params: PlanApprovalParams) => PlanApprovalResult | undefined = () => undefined;
  readonly planRequests: Array<{ params: PlanApprovalParams; signal: AbortSignal }> = [];

  requestPlanApproval(_sessionId: string, params: PlanApprovalParams, signal: AbortSignal) {
    this.planRequests.push({ params, signal });
    return Promise.resolve(this.plan(params));
  }

  /** Resolves once every answer so far has settled and its handlers have run. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.permissionRequests, ...this.userInputRequests].map((r) => r.answer));
    await new Promise((resolve) => setImmediate(resolve));
  }
}

let host: RunningTauHost;
let cwd: string;

beforeAll(async () => {
  host = await startTauHost({ port: 0 });
  cwd = realpathSync(mkdtempSync(join(tmpdir(), "interactions-")));
});

afterAll(async () => {
  await host?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

/** One bridge connection, one session, its hub and its interactions. */
class Rig {
  readonly reverse = new ScriptedReverse();
  /** Every request the interactions sent upstream, in order (a pass-through recorder). */
  readonly sent: Array<{ method: string; params: any }> = [];
  upstream!: TauUpstream;
  hub!: SessionHub;
  interactions!: SessionInteractions;
  sessionId!: string;
  private turnCounter = 0;

  async start(options: { mode?: ApprovalModeName; deadlineMs?: number } = {}): Promise<this> {
    const deadlineMs = options.deadlineMs ?? 300_000;
    this.upstream = new TauUpstream({
      url: host.url,
      client: { name: "tau-gateway-tests", version: "1", tools: gatewayClientTools(COMMAND_TOOLS, { deadlineMs }) },
      reconnect: false,
    });
    await this.upstream.start();
    const { sessionId } = await this.upstream.request("session.create", {
      executionEnvironment: { kind: "local", cwd },
      attributes: {},
    });
    this.sessionId = sessionId;
    this.hub = new SessionHub({ sessionId, upstream: this.upstream });
    const recorder = {
      request: <M extends keyof ClientRequests>(method: M, params: ClientRequests[M]["params"], opts?: { signal?: AbortSignal }) => {
        this.sent.push({ method, params });
        return this.upstream.request(method, params, opts);
      },
    };
    this.interactions = new SessionInteractions({
      sessionId,
      upstream: recorder,
      hub: this.hub,
      mode: options.mode ?? "on_request",
      commandTools: COMMAND_TOOLS,
      deadlineMs,
      reverse: this.reverse,
    });
    this.upstream.onMessage((message) => {
      if (message.sessionId !== sessionId) return;
      if (message.type === "session.clientTool.call") this.interactions.onCall(message);
      else if (message.type === "session.clientTool.cancel") this.interactions.onCancel(message);
      else this.hub.handle(message);
    });
    // Observing attaches the bridge connection's tools to the session.
    await this.hub.attach();
    return this;
  }

  /** Runs a turn with `text` and resolves when it has settled. */
  turn(text: string): Promise<UserTurnResult> {
    const turn = this.upstream.request("session.submit", { sessionId: this.sessionId, text, historyEntryId: `turn-${++this.turnCounter}` });
    // A test that fails before awaiting its turn must not also leave an unhandled rejection behind.
    turn.catch(() => undefined);
    return turn;
  }

  events(): Event[] {
    return this.hub.log.read(0).events;
  }

  eventsOf<T extends Event["type"]>(type: T): Array<Extract<Event, { type: T }>> {
    return this.events().filter((e): e is Extract<Event, { type: T }> => e.type === type);
  }

  /** The first event of `type` (matching `predicate`) ever logged, waiting for it if needed. */
  waitForEvent<T extends Event["type"]>(type: T, predicate: (e: Extract<Event, { type: T }>) => boolean = () => true): Promise<Extract<Event, { type: T }>> {
    const matches = (e: Event): e is Extract<Event, { type: T }> => e.type === type && predicate(e as Extract<Event, { type: T }>);
    const found = this.events().find(matches);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        unsubscribe();
        reject(new Error(`no ${type} event; events so far: ${JSON.stringify(this.events().map((e) => [e.type, e.payload]))}`));
      }, 10_000);
      const unsubscribe = this.hub.log.subscribe((e) => {
        if (!matches(e)) return;
        clearTimeout(timer);
        unsubscribe();
        resolve(e);
      });
    });
  }

  /** The first request of `method` the interactions sent upstream, waiting for it if needed. */
  async waitForRequest(method: string): Promise<{ method: string; params: any }> {
    for (let waited = 0; waited < 10_000; waited += 20) {
      const found = this.sent.find((s) => s.method === method);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no ${method} request; sent: ${this.sent.map((s) => s.method).join(", ")}`);
  }

  snapshot(): Promise<Snapshot> {
    return this.upstream.request("session.snapshot", { sessionId: this.sessionId });
  }

  /** The tool results of the session, in order: tool name, text and whether it is an error. */
  async toolResults(): Promise<Array<{ toolName: string; text: string; isError: boolean }>> {
    const snapshot = await this.snapshot();
    return snapshot.messages
      .map((m) => m.message)
      .filter((m) => m.role === "toolResult")
      .map((m: any) => ({
        toolName: m.toolName,
        isError: m.isError,
        text: (m.content as any[]).filter((b) => b.type === "text").map((b) => b.text).join(""),
      }));
  }

  /** session.clientTool.result requests sent, by callId. */
  resultsSent(): Map<string, any[]> {
    const byCall = new Map<string, any[]>();
    for (const { method, params } of this.sent) {
      if (method !== "session.clientTool.result") continue;
      byCall.set(params.callId, [...(byCall.get(params.callId) ?? []), params]);
    }
    return byCall;
  }

  /** Every logged event must fit the registry, and no call may have been answered twice. */
  check(): void {
    for (const event of this.events()) {
      const checked = ask.eventPayload(event.type, event.payload);
      expect(checked.issues, `${event.type} ${JSON.stringify(event.payload)}`).toEqual([]);
    }
    for (const [callId, results] of this.resultsSent()) expect(results, `results for ${callId}`).toHaveLength(1);
  }

  async close(): Promise<void> {
    this.interactions?.cancelAll("test finished");
    await this.upstream?.close();
  }
}

/** The rig of the running test; `active` is the one still to be checked and closed. */
let rig: Rig;
let active: Rig | undefined;
afterEach(async () => {
  const current = active;
  active = undefined;
  if (!current) return;
  try {
    current.check();
  } finally {
    await current.close();
  }
});

const newRig = async (options?: { mode?: ApprovalModeName; deadlineMs?: number }) => {
  rig = active = new Rig();
  return rig.start(options);
};

function interactionError(fn: () => unknown): InteractionError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InteractionError);
    return error as InteractionError;
  }
  throw new Error("expected an InteractionError");
}

describe("command tools awaiting approval", () => {
  it("runs the approved command in the session with the arguments as JSON on stdin", async () => {
    await newRig();
    const turn = rig.turn('/tool echo-args {"a":1}');
    const required = await rig.waitForEvent("approval.required");
    expect(required.payload).toEqual({
      id: "act_1",
      toolName: "echo-args",
      args: { a: 1 },
      message: expect.stringContaining("cat"),
      allowedScopes: ["once", "session"],
    });
    expect(rig.interactions.list()).toEqual([
      { id: "act_1", kind: "approval", status: "pending", payload: { toolName: "echo-args", args: { a: 1 }, message: required.payload.message, allowedScopes: ["once", "session"] } },
    ]);
    for (const record of rig.interactions.list()) expect(ask.check("InteractionRecord", record).issues).toEqual([]);

    rig.interactions.approve("act_1");
    expect((await turn).turn.status).toBe("completed");
    expect(await rig.toolResults()).toEqual([{ toolName: "echo-args", text: '{"a":1}', isError: false }]);
    expect(rig.eventsOf("approval.updated").map((e) => e.payload)).toEqual([{ id: "act_1", status: "approved" }]);
    expect(rig.interactions.list()).toEqual([]);
    // The command ran through session.exec with the configured program as argv, never via a shell string.
    const exec = rig.sent.find((s) => s.method === "session.exec")!;
    expect(exec.params).toMatchObject({ sessionId: rig.sessionId, command: 'exec "$0" "$@"', args: ["cat"], stdinBase64: Buffer.from('{"a":1}').toString("base64") });
    expect(exec.params.execId).toMatch(/^gw-/);
    // The ack came first.
    expect(rig.sent[0]).toMatchObject({ method: "session.clientTool.ack", params: { sessionId: rig.sessionId } });
  });

  it("fails the tool with the feedback when rejected", async () => {
    await newRig();
    const turn = rig.turn('/tool echo-args {"a":2}');
    await rig.waitForEvent("approval.required");
    rig.interactions.reject("act_1", "not on a Friday");
    await turn;
    expect(rig.eventsOf("approval.updated").map((e) => e.payload)).toEqual([{ id: "act_1", status: "rejected", feedback: "not on a Friday" }]);
    const [result] = await rig.toolResults();
    expect(result).toMatchObject({ toolName: "echo-args", isError: true });
    expect(result!.text).toContain("not on a Friday");
    expect(rig.sent.some((s) => s.method === "session.exec")).toBe(false);
  });

  it("approve-all and reject-all resolve pending approvals only and report how many", async () => {
    await newRig();
    const turn = rig.turn('/tool echo-args {"a":1}\n/tool ask_user {"question":"Proceed?"}\n/tool echo-args {"a":2}');
    await rig.waitForEvent("approval.required", (e) => e.payload.id === "act_1");
    expect(rig.interactions.approveAll()).toBe(1);
    // A user-input request is not an approval: approve-all leaves it alone.
    await rig.waitForEvent("input.requested");
    expect(rig.interactions.approveAll()).toBe(0);
    expect(rig.interactions.rejectAll()).toBe(0);
    expect(rig.interactions.list().map((r) => r.id)).toEqual(["input_1"]);
    rig.interactions.respond("input_1", "yes");
    await rig.waitForEvent("approval.required", (e) => e.payload.id === "act_2");
    expect(rig.interactions.rejectAll("too many")).toBe(1);
    await turn;
    const results = await rig.toolResults();
    expect(results.map((r) => [r.toolName, r.isError])).toEqual([
      ["echo-args", false],
      ["ask_user", false],
      ["echo-args", true],
    ]);
    expect(results[2]!.text).toContain("too many");
    expect(rig.eventsOf("approval.updated").map((e) => e.payload)).toEqual([
      { id: "act_1", status: "approved" },
      { id: "act_2", status: "rejected", feedback: "too many" },
    ]);
  });

  it("scope session grants the tool for the rest of the session", async () => {
    await newRig();
    const turn = rig.turn('/tool echo-args {"a":1}\n/tool echo-args {"a":2}');
    await rig.waitForEvent("approval.required");
    rig.interactions.approve("act_1", "session");
    await turn;
    expect(rig.eventsOf("approval.required").map((e) => e.payload.id)).toEqual(["act_1"]);
    expect(rig.eventsOf("approval.updated").map((e) => e.payload)).toEqual([
      { id: "act_1", status: "approved", scope: "session" },
      { id: "act_2", status: "approved", scope: "session" },
    ]);
    expect((await rig.toolResults()).map((r) => r.text)).toEqual(['{"a":1}', '{"a":2}']);
  });

  it("refuses scope project and keeps the approval pending", async () => {
    await newRig();
    const turn = rig.turn('/tool echo-args {"a":1}');
    await rig.waitForEvent("approval.required");
    expect(interactionError(() => rig.interactions.approve("act_1", "project")).code).toBe("invalid_params");
    expect(interactionError(() => rig.interactions.approveAll("project")).code).toBe("invalid_params");
    expect(rig.interactions.list().map((r) => r.id)).toEqual(["act_1"]);
    rig.interactions.approve("act_1");
    await turn;
  });

  it("denies when nobody decides before the deadline (fail closed), with events", async () => {
    await newRig({ deadlineMs: 200 });
    await rig.turn('/tool echo-args {"a":1}\n/tool ask_user {"question":"Anyone?"}\n/tool submit_plan {"plan":"Step 1"}');
    expect(rig.eventsOf("approval.updated").map((e) => e.payload)).toEqual([{ id: "act_1", status: "expired", reason: "nobody decided within 200 ms" }]);
    expect(rig.eventsOf("input.resolved").map((e) => e.payload)).toEqual([{ id: "input_1", status: "expired", reason: "nobody decided within 200 ms" }]);
    expect(rig.eventsOf("plan.rejected").map((e) => e.payload)).toEqual([
      { id: "plan_1", plan: "Step 1", status: "expired", reason: "nobody decided within 200 ms" },
    ]);
    const results = await rig.toolResults();
    expect(results.map((r) => [r.toolName, r.isError])).toEqual([
      ["echo-args", true],
      ["ask_user", true],
      ["submit_plan", true],
    ]);
    expect(results[0]!.text).toContain("denied");
    expect(rig.sent.some((s) => s.method === "session.exec")).toBe(false);
    expect(interactionError(() => rig.interactions.approve("act_1")).code).toBe("interaction_not_found");
  });

  it("first resolution wins; later ones are interaction_not_found", async () => {
    await newRig();
    let answerLate!: (answer: InteractionRequestPermissionResult) => void;
    rig.reverse.permission = () => new Promise((resolve) => (answerLate = resolve));
    const turn = rig.turn('/tool echo-args {"a":1}');
    await rig.waitForEvent("approval.required");
    // The client is asked once the event is in the log.
    await vi.waitFor(() => expect(rig.reverse.permissionRequests).toHaveLength(1));
    rig.interactions.approve("act_1");
    const again = interactionError(() => rig.interactions.approve("act_1"));
    expect(again.code).toBe("interaction_not_found");
    expect(interactionError(() => rig.interactions.reject("act_1")).code).toBe("interaction_not_found");
    expect(interactionError(() => rig.interactions.approve("act_99")).code).toBe("interaction_not_found");
    // The client that was asked hears that the question is settled, and its late "deny" changes nothing.
    expect(rig.reverse.permissionRequests[0]!.signal.aborted).toBe(true);
    answerLate({ decision: "deny" });
    await turn;
    expect(rig.eventsOf("approval.updated").map((e) => e.payload.status)).toEqual(["approved"]);
    expect((await rig.toolResults())[0]).toMatchObject({ isError: false, text: '{"a":1}' });
  });

  it("a Tau-side cancel (turn interrupted) cancels the interaction, says so, and sends no result", async () => {
    await newRig();
    const turn = rig.turn('/tool echo-args {"a":1}');
    await rig.waitForEvent("approval.required");
    await rig.upstream.request("session.interrupt", { sessionId: rig.sessionId });
    const updated = await rig.waitForEvent("approval.updated");
    expect(updated.payload).toEqual({ id: "act_1", status: "cancelled", reason: "the tool call was cancelled (aborted)" });
    expect((await turn).turn.status).toBe("aborted");
    expect(rig.interactions.list()).toEqual([]);
    expect(interactionError(() => rig.interactions.approve("act_1")).code).toBe("interaction_not_found");
    expect(rig.resultsSent().size).toBe(0);
    expect(rig.reverse.permissionRequests[0]!.signal.aborted).toBe(true);
  });

  it("a Tau-side cancel while the approved command runs cancels the run and sends no result", async () => {
    await newRig({ mode: "never" });
    const turn = rig.turn("/tool slow {}");
    const exec = await rig.waitForRequest("session.exec");
    await rig.upstream.request("session.interrupt", { sessionId: rig.sessionId });
    expect((await turn).turn.status).toBe("aborted");
    const cancelExec = await rig.waitForRequest("session.cancelExec");
    expect(cancelExec.params).toEqual({ sessionId: rig.sessionId, execId: exec.params.execId });
    expect(rig.resultsSent().size).toBe(0);
  });

  it("a failing command fails the tool with its exit code and output", async () => {
    await newRig({ mode: "never" });
    await rig.turn('/tool failing {"why":"test"}');
    const [result] = await rig.toolResults();
    expect(result!.isError).toBe(true);
    expect(result!.text).toContain("sh exited with 3");
    expect(result!.text).toContain('{"why":"test"}');
    expect(result!.text).toContain("broken");
  });

  it("arguments that do not fit the tool's parameters fail the call without running anything", async () => {
    await newRig({ mode: "never" });
    await rig.turn('/tool echo-args {"a":"one"}');
    const [result] = await rig.toolResults();
    expect(result).toMatchObject({ isError: true });
    expect(result!.text).toContain("invalid arguments: /a: must be of type integer");
    expect(rig.sent.map((s) => s.method)).toEqual(["session.clientTool.ack", "session.clientTool.result"]);
  });
});

describe("approval modes", () => {
  for (const mode of ["auto", "never"] as const) {
    it(`mode ${mode} runs command tools without asking`, async () => {
      await newRig({ mode });
      await rig.turn('/tool echo-args {"a":5}');
      expect(rig.eventsOf("approval.required")).toEqual([]);
      expect(rig.reverse.permissionRequests).toEqual([]);
      expect(await rig.toolResults()).toEqual([{ toolName: "echo-args", text: '{"a":5}', isError: false }]);
    });
  }

  it("reports the canonical approval mode", async () => {
    const modes: Record<ApprovalModeName, string> = { on_request: "require", plan: "require", auto: "auto", never: "off" };
    for (const [mode, canonical] of Object.entries(modes)) {
      const interactions = new SessionInteractions({
        sessionId: "s",
        upstream: { request: () => Promise.reject(new Error("unused")) },
        hub: { emit: () => undefined, appended: async () => undefined },
        mode: mode as ApprovalModeName,
        commandTools: [],
        reverse: new ScriptedReverse(),
      });
      expect(interactions.approvalMode).toBe(canonical);
    }
  });

  it("a mode set while the session runs gates the next call", async () => {
    await newRig({ mode: "on_request" });
    rig.interactions.setMode("auto");
    expect(rig.interactions.mode).toBe("auto");
    expect(rig.interactions.approvalMode).toBe("auto");
    await rig.turn('/tool echo-args {"a":1}');
    expect(rig.eventsOf("approval.required")).toEqual([]);
    rig.interactions.setMode("on_request");
    const turn = rig.turn('/tool echo-args {"a":2}');
    await rig.waitForEvent("approval.required");
    rig.interactions.reject("act_1");
    await turn;
    expect((await rig.toolResults()).map((r) => [r.text, r.isError])).toEqual([
      ['{"a":1}', false],
      ["rejected by the user", true],
    ]);
  });

  it("mode plan denies command tools until a plan is approved, then asks as usual", async () => {
    await newRig({ mode: "plan" });
    const turn = rig.turn('/tool echo-args {"a":1}\n/tool submit_plan {"plan":"1. echo"}\n/tool echo-args {"a":2}');
    const proposed = await rig.waitForEvent("plan.proposed");
    expect(proposed.payload).toEqual({ id: "plan_1", plan: "1. echo" });
    expect(rig.interactions.list()).toEqual([]); // plans are not listed
    rig.interactions.approvePlan();
    await rig.waitForEvent("approval.required");
    rig.interactions.approve("act_1");
    await turn;
    const results = await rig.toolResults();
    expect(results.map((r) => [r.toolName, r.isError])).toEqual([
      ["echo-args", true],
      ["submit_plan", false],
      ["echo-args", false],
    ]);
    expect(results[0]!.text).toContain("not available until a plan is approved");
    expect(results[2]!.text).toBe('{"a":2}');
    expect(rig.eventsOf("plan.approved").map((e) => e.payload)).toEqual([{ id: "plan_1", plan: "1. echo" }]);
  });
});

describe("ask_user", () => {
  it("is answered by interaction/respond", async () => {
    await newRig();
    const turn = rig.turn('/tool ask_user {"question":"Which colour?","options":["red","blue"]}');
    const requested = await rig.waitForEvent("input.requested");
    expect(requested.payload).toEqual({ id: "input_1", prompt: "Which colour?", options: ["red", "blue"] });
    expect(rig.interactions.list()).toEqual([{ id: "input_1", kind: "user_input", status: "pending", payload: { prompt: "Which colour?", options: ["red", "blue"] } }]);
    // Not an approval, and an approval id is not a user-input request.
    expect(interactionError(() => rig.interactions.approve("input_1")).code).toBe("interaction_not_found");
    rig.interactions.respond("input_1", "blue");
    expect(interactionError(() => rig.interactions.respond("input_1", "red")).code).toBe("interaction_not_found");
    await turn;
    expect(await rig.toolResults()).toEqual([{ toolName: "ask_user", text: "blue", isError: false }]);
    expect(rig.eventsOf("input.resolved").map((e) => e.payload)).toEqual([{ id: "input_1", status: "responded", response: "blue" }]);
  });

  it("is answered by a reverse request", async () => {
    await newRig();
    rig.reverse.userInput = () => ({ response: "green" });
    await rig.turn('/tool ask_user {"question":"Favourite colour?"}');
    const [asked] = rig.reverse.userInputRequests;
    expect(asked!.params).toEqual({ requestId: "input_1", prompt: "Favourite colour?", sessionId: rig.sessionId, interactionId: "input_1" });
    expect(ask.params("interaction/requestUserInput", asked!.params, "", "server").issues).toEqual([]);
    expect(await rig.toolResults()).toEqual([{ toolName: "ask_user", text: "green", isError: false }]);
    expect(rig.eventsOf("input.resolved").map((e) => e.payload)).toEqual([{ id: "input_1", status: "responded", response: "green" }]);
  });

  it("declined: the tool fails with the reason, and the request ends cancelled", async () => {
    await newRig();
    const turn = rig.turn('/tool ask_user {"question":"Which colour?"}');
    await rig.waitForEvent("input.requested");
    rig.interactions.decline("input_1", "the user declined to answer");
    expect(interactionError(() => rig.interactions.respond("input_1", "red")).code).toBe("interaction_not_found");
    expect(interactionError(() => rig.interactions.decline("act_1", "no")).code).toBe("interaction_not_found");
    await turn;
    expect(await rig.toolResults()).toEqual([{ toolName: "ask_user", text: "the user did not answer: the user declined to answer", isError: true }]);
    expect(rig.eventsOf("input.resolved").map((e) => e.payload)).toEqual([{ id: "input_1", status: "cancelled", reason: "the user declined to answer" }]);
  });

  it("keeps waiting when no client can answer or the reverse request fails", async () => {
    await newRig();
    rig.reverse.userInput = () => Promise.reject(new Error("client went away"));
    const turn = rig.turn('/tool ask_user {"question":"Still there?"}');
    await rig.waitForEvent("input.requested");
    await rig.reverse.settled();
    expect(rig.reverse.userInputRequests).toHaveLength(1);
    expect(rig.interactions.list().map((r) => r.id)).toEqual(["input_1"]);
    rig.interactions.respond("input_1", "yes");
    await turn;
    expect((await rig.toolResults())[0]!.text).toBe("yes");
  });
});

describe("submit_plan", () => {
  it("approved: plan.approved and a tool result saying so", async () => {
    await newRig();
    expect(interactionError(() => rig.interactions.approvePlan()).code).toBe("plan_not_found");
    const turn = rig.turn('/tool submit_plan {"plan":"1. Read\\n2. Write"}');
    await rig.waitForEvent("plan.proposed");
    rig.interactions.approvePlan();
    expect(interactionError(() => rig.interactions.approvePlan()).code).toBe("plan_not_found");
    await turn;
    const [result] = await rig.toolResults();
    expect(result).toMatchObject({ toolName: "submit_plan", isError: false });
    expect(result!.text).toContain("approved");
    expect(rig.eventsOf("plan.approved").map((e) => e.payload)).toEqual([{ id: "plan_1", plan: "1. Read\n2. Write" }]);
  });

  it("rejected: plan.rejected with the feedback, passed on to the agent", async () => {
    await newRig();
    const turn = rig.turn('/tool submit_plan {"plan":"Delete everything"}');
    await rig.waitForEvent("plan.proposed");
    rig.interactions.rejectPlan("keep the tests");
    expect(interactionError(() => rig.interactions.rejectPlan()).code).toBe("plan_not_found");
    await turn;
    const [result] = await rig.toolResults();
    expect(result).toMatchObject({ toolName: "submit_plan", isError: false });
    expect(result!.text).toContain("rejected");
    expect(result!.text).toContain("keep the tests");
    expect(rig.eventsOf("plan.rejected").map((e) => e.payload)).toEqual([{ id: "plan_1", plan: "Delete everything", feedback: "keep the tests" }]);
  });
});

describe("a client that attaches while a plan waits", () => {
  it("is asked about it through its requester, and its answer decides the plan", async () => {
    await newRig();
    const turn = rig.turn('/tool submit_plan {"plan":"1. Read"}');
    await rig.waitForEvent("plan.proposed");
    const joining = new ScriptedReverse();
    joining.plan = () => ({ action: "reject", feedback: "smaller steps" });
    askJoiningClient(rig, joining);
    await turn;
    expect(joining.planRequests.map((r) => r.params)).toEqual([{ sessionId: rig.sessionId, interactionId: "plan_1", plan: "1. Read" }]);
    expect(rig.eventsOf("plan.rejected").map((e) => e.payload)).toEqual([{ id: "plan_1", plan: "1. Read", feedback: "smaller steps" }]);
  });
});

describe("reverse permission requests", () => {
  it("asks with the interaction's id and the call's arguments", async () => {
    await newRig();
    rig.reverse.permission = () => ({ decision: "allow" });
    await rig.turn('/tool echo-args {"a":7}');
    const [asked] = rig.reverse.permissionRequests;
    expect(asked!.params).toEqual({
      requestId: "act_1",
      toolName: "echo-args",
      input: { a: 7 },
      riskLevel: "medium",
      reason: "Tool 'echo-args' requires approval",
      allowedScopes: ["once", "session"],
      sessionId: rig.sessionId,
      interactionId: "act_1",
    });
    expect(ask.params("interaction/requestPermission", asked!.params, "", "server").issues).toEqual([]);
    expect(rig.eventsOf("approval.updated").map((e) => e.payload)).toEqual([{ id: "act_1", status: "approved" }]);
    expect((await rig.toolResults())[0]).toMatchObject({ isError: false, text: '{"a":7}' });
  });

  const cases: Array<{ decision: string; approved: boolean }> = [
    { decision: "approve", approved: true },
    { decision: "accept", approved: true },
    { decision: "allow_once", approved: true },
    { decision: "deny", approved: false },
    { decision: "decline", approved: false },
    { decision: "Allow", approved: false },
    { decision: "maybe later", approved: false },
  ];
  for (const { decision, approved } of cases) {
    it(`decision ${JSON.stringify(decision)} ${approved ? "approves once" : "denies"}`, async () => {
      await newRig();
      rig.reverse.permission = () => ({ decision } as InteractionRequestPermissionResult);
      await rig.turn('/tool echo-args {"a":1}');
      expect(rig.eventsOf("approval.updated").map((e) => e.payload)).toEqual([{ id: "act_1", status: approved ? "approved" : "rejected" }]);
      expect((await rig.toolResults())[0]!.isError).toBe(!approved);
    });
  }

  for (const decision of ["acceptForSession", "allow_always"] as const) {
    it(`decision ${decision} approves for the session`, async () => {
      await newRig();
      rig.reverse.permission = () => ({ decision });
      await rig.turn('/tool echo-args {"a":1}\n/tool echo-args {"a":2}');
      expect(rig.reverse.permissionRequests).toHaveLength(1);
      expect(rig.eventsOf("approval.updated").map((e) => e.payload)).toEqual([
        { id: "act_1", status: "approved", scope: "session" },
        { id: "act_2", status: "approved", scope: "session" },
      ]);
      expect((await rig.toolResults()).map((r) => r.isError)).toEqual([false, false]);
    });
  }

  it("a denial carries the client's feedback or reason to the agent", async () => {
    await newRig();
    rig.reverse.permission = () => ({ decision: "deny", reason: "looks risky" });
    await rig.turn('/tool echo-args {"a":1}');
    expect(rig.eventsOf("approval.updated").map((e) => e.payload)).toEqual([{ id: "act_1", status: "rejected", feedback: "looks risky" }]);
    expect((await rig.toolResults())[0]!.text).toContain("looks risky");
  });

  it("a failed reverse request denies (an error is not consent)", async () => {
    await newRig();
    rig.reverse.permission = () => Promise.reject(new Error("connection lost"));
    await rig.turn('/tool echo-args {"a":1}');
    const [updated] = rig.eventsOf("approval.updated");
    expect(updated!.payload).toMatchObject({ id: "act_1", status: "rejected" });
    expect(updated!.payload.feedback).toContain("connection lost");
    expect((await rig.toolResults())[0]!.isError).toBe(true);
  });

  it("when no client can answer, the approval waits for interaction/approve", async () => {
    await newRig();
    rig.reverse.permission = () => undefined;
    const turn = rig.turn('/tool echo-args {"a":1}');
    await rig.waitForEvent("approval.required");
    await rig.reverse.settled();
    expect(rig.reverse.permissionRequests).toHaveLength(1);
    expect(rig.interactions.list().map((r) => r.id)).toEqual(["act_1"]);
    rig.interactions.approve("act_1");
    await turn;
    expect((await rig.toolResults())[0]!.isError).toBe(false);
  });
});

describe("cancelAll", () => {
  it("cancels pending interactions with events and tells Tau the call is over", async () => {
    await newRig();
    const turn = rig.turn('/tool ask_user {"question":"Closing?"}');
    await rig.waitForEvent("input.requested");
    rig.interactions.cancelAll("session closed");
    await turn;
    expect(rig.eventsOf("input.resolved").map((e) => e.payload)).toEqual([{ id: "input_1", status: "cancelled", reason: "session closed" }]);
    expect(rig.interactions.list()).toEqual([]);
    const [result] = await rig.toolResults();
    expect(result).toMatchObject({ toolName: "ask_user", isError: true });
    expect(result!.text).toContain("session closed");
  });
});
