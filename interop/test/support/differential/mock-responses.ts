import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { chunks, composeReply, parseScript, type ScriptStep } from "../../../../src/host/scripted-agent.js";

/**
 * A loopback mock of the OpenAI Responses API (`POST /v1/responses`, streamed) that acts as the
 * embedded host's scripted agent does, so a real `codex app-server` in front of it runs the same
 * conversations as tau-gateway on its embedded host. The latest user message is read with the
 * scripted agent's own parser (src/host/scripted-agent.ts):
 *
 *   reply text             an assistant message "You said: …", streamed in pieces of 8 characters
 *   /think TEXT            a reasoning item whose summary is TEXT, streamed before the reply
 *   /tool ask_user {"question":Q,"options":[…]}   a `request_user_input` call putting Q to the user
 *   /tool NAME {json}      an `exec_command` of `printf '%s' 'JSON'` that asks for escalated
 *                          permissions, so Codex's on-request policy asks the user first — as the
 *                          gateway asks before its command tool `echo-args` (which prints its
 *                          arguments) runs
 *   /bash COMMAND          an `exec_command` of COMMAND within the sandbox (asks nothing)
 *   /sleep MS              the stream pauses MS milliseconds (an interrupt ends it sooner)
 *   /fail MESSAGE          the response fails with MESSAGE
 *
 * A tool step ends the response with its call; Codex sends the call's output in the next request,
 * and the script goes on after the steps already answered. Each request is kept for the tests.
 */

export interface MockResponses {
  /** http://127.0.0.1:PORT/v1 */
  baseUrl: string;
  /** Bodies of every request received, in order. */
  requests: Array<Record<string, any>>;
  close(): Promise<void>;
}

type InputItem = Record<string, any>;

/** The text of the newest user message that is not Codex's own context, and what followed it. */
function conversation(input: InputItem[]): { text: string; after: InputItem[] } {
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i]!;
    if (item.type !== "message" || item.role !== "user") continue;
    const text = (item.content as InputItem[]).filter((c) => c.type === "input_text").map((c) => c.text as string).join("\n");
    if (/^<(environment_context|user_instructions|turn_aborted)/.test(text.trim())) continue;
    return { text, after: input.slice(i + 1) };
  }
  return { text: "", after: [] };
}

/** What a tool call's output reads as in the reply, as the scripted agent words it. */
function summary(step: ScriptStep & { kind: "tool" | "bash" }, output: string): string {
  const name = step.kind === "bash" ? "bash" : step.name;
  const marker = /\nOutput:\n([\s\S]*)$/.exec(output);
  const exited = /Process exited with code (\d+)/.exec(output);
  const text = (marker ? marker[1]! : output).trim().replace(/\s+/g, " ");
  if (exited && exited[1] !== "0") return `Tool ${name} failed: ${text}`;
  if (!marker && !exited) return `Tool ${name} failed: ${text}`;
  return `Tool ${name} returned: ${text}`;
}

const shellQuote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

class ResponseWriter {
  private outputIndex = 0;
  private sequence = 0;
  constructor(
    private readonly res: ServerResponse,
    readonly id: string,
  ) {}

  event(type: string, data: Record<string, unknown>): void {
    this.res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...data })}\n\n`);
  }

  reasoning(text: string): void {
    const id = `rs_${this.id}_${this.outputIndex}`;
    const output_index = this.outputIndex++;
    this.event("response.output_item.added", { output_index, item: { type: "reasoning", id, summary: [] } });
    this.event("response.reasoning_summary_part.added", { output_index, item_id: id, summary_index: 0, part: { type: "summary_text", text: "" } });
    for (const delta of chunks(text)) this.event("response.reasoning_summary_text.delta", { output_index, item_id: id, summary_index: 0, delta });
    this.event("response.output_item.done", { output_index, item: { type: "reasoning", id, summary: [{ type: "summary_text", text }] } });
  }

  message(text: string): void {
    const id = `msg_${this.id}_${this.outputIndex}`;
    const output_index = this.outputIndex++;
    this.event("response.output_item.added", { output_index, item: { type: "message", id, role: "assistant", status: "in_progress", content: [] } });
    for (const delta of chunks(text)) this.event("response.output_text.delta", { output_index, item_id: id, content_index: 0, delta });
    this.event("response.output_item.done", { output_index, item: { type: "message", id, role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] } });
  }

  functionCall(name: string, args: Record<string, unknown>): void {
    const output_index = this.outputIndex++;
    const item = { type: "function_call", id: `fc_${this.id}_${output_index}`, call_id: `call_${this.id}_${output_index}`, name, arguments: JSON.stringify(args) };
    this.event("response.output_item.added", { output_index, item });
    this.event("response.output_item.done", { output_index, item });
  }

  completed(outputTokens: number): void {
    const usage = { input_tokens: 1, input_tokens_details: { cached_tokens: 0 }, output_tokens: outputTokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1 + outputTokens };
    this.event("response.completed", { response: { id: this.id, object: "response", status: "completed", usage } });
    this.res.end();
  }

  failed(message: string): void {
    this.event("response.failed", { response: { id: this.id, object: "response", status: "failed", error: { code: "server_error", message } } });
    this.res.end();
  }
}

function pause(ms: number, req: IncomingMessage): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(true), ms);
    req.socket.once("close", () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

/** Acts out the script of `body` on `res`. */
async function respond(body: Record<string, any>, req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const out = new ResponseWriter(res, id);
  out.event("response.created", { response: { id, object: "response", status: "in_progress" } });
  const { text, after } = conversation(body.input ?? []);
  const outputs = after.filter((item) => item.type === "function_call_output").map((item) => (typeof item.output === "string" ? item.output : JSON.stringify(item.output)));
  const script = parseScript(text);
  const summaries: string[] = [];
  let toolsSeen = 0;
  for (const step of script.steps) {
    switch (step.kind) {
      case "think":
        if (toolsSeen === outputs.length) out.reasoning(step.text);
        break;
      case "fail":
        out.failed(step.message);
        return;
      case "length":
        break;
      case "notice":
        break;
      case "sleep":
        if (toolsSeen === outputs.length && !(await pause(step.ms, req))) return;
        break;
      case "bash":
      case "tool": {
        const answered = outputs[toolsSeen++];
        if (answered !== undefined) {
          summaries.push(step.kind === "tool" && step.name === "ask_user" ? `Tool ask_user returned: ${userAnswer(answered)}` : summary(step, answered));
          break;
        }
        if (step.kind === "tool" && step.name === "ask_user") {
          const question = String(step.args.question ?? "");
          const options = Array.isArray(step.args.options) ? (step.args.options as unknown[]).map((label) => ({ label: String(label), description: "" })) : [];
          out.functionCall("request_user_input", { questions: [{ id: "answer", header: "Question", question, options }] });
        } else if (step.kind === "tool") {
          out.functionCall("exec_command", { cmd: `printf '%s' ${shellQuote(JSON.stringify(step.args))}`, sandbox_permissions: "require_escalated", justification: `Run ${step.name}?`, login: false });
        } else {
          out.functionCall("exec_command", { cmd: step.command, login: false });
        }
        out.completed(1);
        return;
      }
    }
  }
  const reply = composeReply(script.replyLines, summaries);
  out.message(reply);
  out.completed(reply.split(/\s+/).filter(Boolean).length);
}

/** The answer text of a `request_user_input` output ({"answers":{"answer":{"answers":[…]}}}). */
function userAnswer(output: string): string {
  try {
    const parsed = JSON.parse(output) as { answers?: Record<string, { answers?: string[] }> };
    return Object.values(parsed.answers ?? {}).flatMap((a) => a.answers ?? []).join(", ");
  } catch {
    return output;
  }
}

export async function startMockResponses(): Promise<MockResponses> {
  const requests: Array<Record<string, any>> = [];
  let counter = 0;
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8").on("data", (chunk: string) => (raw += chunk));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.endsWith("/responses")) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no such route: ${req.method} ${req.url}` } }));
        return;
      }
      const body = JSON.parse(raw || "{}") as Record<string, any>;
      requests.push(body);
      respond(body, req, res, `resp_${++counter}`).catch((error: Error) => {
        res.destroy(error);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
