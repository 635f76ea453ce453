import type { DynamicToolCallOutputContentItem, DynamicToolFunction, DynamicToolSpec } from "../../generated/codex-v2.js";
import type { ContentBlock } from "../../generated/tau-v18.js";
import {
  ClientToolCalls,
  checkSchemaDocument,
  errorReply,
  GATEWAY_TOOL_NAMES,
  TOOL_NAME_PATTERN,
  type GatewayTool,
  type ToolCall,
  type ToolReply,
} from "../bridge/interactions/index.js";
import { HOST_TOOL_NAMES } from "../registry/tau/index.js";
import type { Log } from "../shared/log.js";
import type { TauUpstream } from "../tau/upstream.js";
import type { ToolConnectionLease, ToolConnections } from "./tool-connections.js";
import { ProtocolValidators } from "../validation/validator.js";
import { invalidParams } from "./codex-errors.js";
import { nextTurn } from "./dynamic-tool-bounds.js";
import type { CodexPeer } from "./peer.js";
import type { CodexThread } from "./thread.js";
import { errorText } from "../shared/unknown-values.js";

/**
 * A Codex client's dynamic tools (thread/start `dynamicTools`) as Tau client tools. Tau takes a
 * connection's tools once, when it initializes, and offers them in the sessions that connection
 * observes; so a thread with dynamic tools has its session observed on a connection that
 * advertises them, shared by every thread with the same tools on that host (tool-connections.ts). A call Tau makes is acked like the gateway's own tools
 * (ClientToolCalls), then asked of the client that registered the tool with item/tool/call, which
 * checks the arguments against its schema, as with Codex (the gateway only checks that the schema
 * is one: a client's schema costs no compiling, and its patterns are never run here); the
 * client's content items are the result. The session is let go of with the client's connection
 * (the shared connection closes with its last session), and Tau cancels what was still running. Namespaced tools (the terminal UI's own) are not offered: Codex keeps them
 * for its own model.
 */

export type { ToolConnectionFactory } from "./tool-connections.js";

/**
 * The function tools of a thread/start, checked: names Tau and the models accept, not taken, JSON
 * Schemas, each checked in a turn of its own so that other clients are served in between. Their
 * count and each schema's size were bounded before the params were validated
 * (dynamicToolsOverBounds, the Codex surface's `bound`).
 */
export async function dynamicFunctions(specs: DynamicToolSpec[], taken: readonly string[]): Promise<DynamicToolFunction[]> {
  const functions: DynamicToolFunction[] = [];
  const seen = new Set<string>();
  for (const [index, spec] of specs.entries()) {
    if (spec.type !== "function") continue;
    const at = `dynamicTools[${index}]`;
    if (!new RegExp(TOOL_NAME_PATTERN).test(spec.name)) throw invalidParams(`${at}.name`, `must match ${TOOL_NAME_PATTERN}`);
    if (GATEWAY_TOOL_NAMES.includes(spec.name) || HOST_TOOL_NAMES.includes(spec.name) || taken.includes(spec.name) || seen.has(spec.name)) {
      throw invalidParams(`${at}.name`, `${JSON.stringify(spec.name)} is already the name of another tool`);
    }
    if (typeof spec.inputSchema !== "object" || spec.inputSchema === null || Array.isArray(spec.inputSchema)) {
      throw invalidParams(`${at}.inputSchema`, "must be a JSON Schema object");
    }
    if (index > 0) await nextTurn();
    try {
      checkSchemaDocument(spec.inputSchema);
    } catch (error) {
      throw invalidParams(`${at}.inputSchema`, `not a usable JSON Schema: ${(error as Error).message}`);
    }
    seen.add(spec.name);
    functions.push(spec);
  }
  return functions;
}

export class DynamicTools {
  readonly names: ReadonlySet<string>;
  private readonly calls: ClientToolCalls;
  private readonly tools: ReadonlyMap<string, GatewayTool>;

  private constructor(
    readonly owner: CodexPeer,
    private readonly thread: CodexThread,
    private readonly connection: TauUpstream,
    private readonly lease: ToolConnectionLease,
    functions: DynamicToolFunction[],
    log?: Log,
  ) {
    this.names = new Set(functions.map((f) => f.name));
    this.tools = new Map(functions.map((f) => [f.name, { start: (call: ToolCall, args: unknown) => this.call(call, f.name, args) }]));
    this.calls = new ClientToolCalls({
      sessionId: thread.threadId,
      upstream: connection,
      toolNamed: (name) => this.tools.get(name),
      cancelled: () => undefined, // the call's signal is aborted: the client's request is withdrawn with it
      log,
    });
  }

  /** Attaches the tools to the thread's session, on the connection that advertises them (shared, tool-connections.ts). */
  static async open(owner: CodexPeer, thread: CodexThread, functions: DynamicToolFunction[], connections: ToolConnections, log?: Log): Promise<DynamicTools> {
    // Calls may come as soon as the session is observed, before the lease is in hand: held until then.
    let tools: DynamicTools | undefined;
    const early: Parameters<Parameters<TauUpstream["onMessage"]>[0]>[0][] = [];
    const deliver = (message: (typeof early)[number]) => {
      if (message.type === "session.clientTool.call") tools!.calls.onCall(message);
      else if (message.type === "session.clientTool.cancel") tools!.calls.onCancel(message);
    };
    const lease = await connections.attach(
      functions.map((f) => ({ name: f.name, description: f.description, parameters: f.inputSchema as Record<string, unknown> })),
      thread.threadId,
      (message) => (tools ? deliver(message) : void early.push(message)),
    );
    tools = new DynamicTools(owner, thread, lease.connection, lease, functions, log);
    for (const message of early.splice(0)) deliver(message);
    return tools;
  }

  async close(): Promise<void> {
    this.calls.forgetIdle();
    await this.lease.release();
  }

  private call(call: ToolCall, tool: string, args: unknown): void {
    const thread = this.thread;
    const item = thread.translatorState.claimDynamicItem(tool);
    const itemId = item?.id ?? call.message.callId;
    if (this.owner.closed) return this.calls.answer(call, errorReply("the client that offers the tool has gone"));
    void thread
      .ask(
        "item/tool/call",
        (turnId) => ({ threadId: thread.threadId, turnId, callId: itemId, tool, arguments: args ?? {} }),
        call.signal,
        (peer) => peer === this.owner,
        (error) => ({ failed: errorText(error) }),
      )
      .then((answer) => {
        if (answer === undefined) return this.calls.answer(call, errorReply("the client did not run the tool"));
        if (typeof answer === "object" && answer !== null && "failed" in answer) return this.calls.answer(call, errorReply(`the client failed the call: ${String(answer.failed)}`));
        if (!ProtocolValidators.shared().get("codex").result("item/tool/call", answer, "", "server").ok) {
          return this.calls.answer(call, errorReply("the client's answer to item/tool/call does not fit the schema"));
        }
        const { contentItems, success } = answer as { contentItems: DynamicToolCallOutputContentItem[]; success: boolean };
        thread.translatorState.recordContentItems(itemId, contentItems);
        this.calls.answer(call, reply(contentItems, success));
      });
  }
}

/** The client's content items as Tau's tool result: text as text, data-URL images as images, anything else named in text. */
function reply(items: DynamicToolCallOutputContentItem[], success: boolean): ToolReply {
  const blocks: ContentBlock[] = items.map((item) => {
    if (item.type === "inputText") return { type: "text", text: item.text };
    if (item.type === "inputImage") {
      const data = /^data:(image\/(?:png|jpeg|webp));base64,(.+)$/.exec(item.imageUrl);
      if (data) return { type: "image", mimeType: data[1] as "image/png", data: data[2]! };
      return { type: "text", text: `[image: ${item.imageUrl}]` };
    }
    return { type: "text", text: `[audio: ${item.audioUrl}]` };
  });
  if (success) return { ok: true, content: blocks };
  const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
  return errorReply(text || "the tool failed");
}
