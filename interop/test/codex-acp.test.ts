import { spawn } from "node:child_process";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { interopRoot, interopRun, officialProblems, sentMethods, TAU_GATEWAY, type InteropRun } from "./support/gateway-process.js";

/**
 * An Agent Client Protocol client (the official SDK, as editors such as Zed use it) → codex-acp
 * 2.6.0 (an ACP face for any Codex app-server, spawned with CODEX_PATH = tau-gateway) → the
 * gateway's Codex dialect → the embedded Tau host. The agent calls the gateway's command tool;
 * codex-acp turns the approval request into an ACP permission request, answered allow, then reject.
 */

const CODEX_ACP = join(interopRoot, "node_modules", "@agentclientprotocol", "codex-acp", "dist", "index.js");

let run: InteropRun;
afterEach(() => run?.cleanup());

interface Turn {
  stopReason: string;
  text: string;
  toolCalls: Array<Record<string, any>>;
}

describe("codex-acp with tau-gateway as its Codex", () => {
  it("runs prompts through ACP, with one permission allowed and one rejected", async () => {
    run = interopRun();
    const child = spawn(process.execPath, [CODEX_ACP], { env: { ...process.env, ...run.env, CODEX_PATH: TAU_GATEWAY }, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    const permissions: Array<{ request: acp.RequestPermissionRequest; chose: string }> = [];
    const answers = ["allow_once", "reject_once"];

    try {
      const stream = acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
      const turns = await acp
        .client({ name: "tau-gateway-interop" })
        .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
          const kind = answers[permissions.length] ?? "reject_once";
          const option = params.options.find((o) => o.kind === kind);
          permissions.push({ request: params, chose: kind });
          return option ? { outcome: { outcome: "selected", optionId: option.optionId } } : { outcome: { outcome: "cancelled" } };
        })
        .connectWith(stream, async (ctx) => {
          const init = await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
          expect(init.protocolVersion).toBe(acp.PROTOCOL_VERSION);
          const session = await ctx.buildSession(run.cwd).start();
          const prompt = async (text: string): Promise<Turn> => {
            void session.prompt(text);
            const turn: Turn = { stopReason: "", text: "", toolCalls: [] };
            for (;;) {
              const message = await session.nextUpdate();
              if (message.kind === "stop") {
                turn.stopReason = message.stopReason;
                return turn;
              }
              const update = message.update as Record<string, any>;
              if (update.sessionUpdate === "agent_message_chunk" && update.content?.type === "text") turn.text += update.content.text;
              if (update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update") turn.toolCalls.push(update);
            }
          };
          return [await prompt("Hello through ACP"), await prompt('/tool echo-args {"n":1}\nFirst'), await prompt('/tool echo-args {"n":2}\nSecond')];
        });

      const [hello, allowed, rejected] = turns;
      expect(hello).toMatchObject({ stopReason: "end_turn" });
      expect(hello!.text).toContain("You said: Hello through ACP");

      expect(permissions.map((p) => p.chose)).toEqual(["allow_once", "reject_once"]);
      expect(allowed!.stopReason).toBe("end_turn");
      expect(allowed!.text).toContain('Tool echo-args returned: {"n":1}');
      expect(allowed!.toolCalls.some((u) => u.status === "completed")).toBe(true);
      expect(rejected!.stopReason).toBe("end_turn");
      expect(rejected!.text).toContain("rejected by the user");
      expect(rejected!.toolCalls.some((u) => u.status === "failed")).toBe(true);

      expect(sentMethods(run).filter((m) => m === "item/commandExecution/requestApproval")).toHaveLength(2);
      expect(officialProblems(run)).toEqual([]);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  });
});
