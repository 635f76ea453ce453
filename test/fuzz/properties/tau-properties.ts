import { tauDialect } from "../dialects/tau.js";
import { nextMessage } from "../infra/channel-wait.js";
import { WebSocketChannel } from "../infra/websocket-channel.js";
import { checkTauMessage } from "../oracles/tau-oracle.js";
import type { RunningTarget, RunProperty } from "../target.js";
import { invalidUtf8Logging } from "./log-properties.js";

/** `/tau` properties: long exec values, duplicate open ids, invalid UTF-8 in the log. */

async function tauChannel(target: RunningTarget): Promise<WebSocketChannel> {
  const channel = await WebSocketChannel.open(`${target.baseUrl!.replace("http://", "ws://")}/tau`);
  await tauDialect().handshake(channel);
  return channel;
}

const request = (id: string, method: string, params: unknown) => JSON.stringify({ version: 18, type: "request", id, method, params });

export const tauProperties: RunProperty[] = [
  {
    checks: "a session.exec with a 100 KB command is answered at once, and /healthz meanwhile",
    async run(target) {
      const problems: string[] = [];
      const channel = await tauChannel(target);
      try {
        for (const [field, tail] of [["command", "\u0000"], ["cwd", "\u0000"], ["command", "\n\u0000"]] as const) {
          const id = `long-${field}-${tail.length}`;
          const params = { sessionId: "no-such-session", execId: id, command: "true", [field]: `${"a".repeat(100_000)}${tail}` };
          const started = Date.now();
          const answer = nextMessage(channel, (m) => m?.type === "response" && m.id === id, `the answer to ${id}`, 60_000);
          channel.sendText(request(id, "session.exec", params));
          const health = await fetch(`${target.baseUrl}/healthz`).then(() => Date.now() - started);
          await answer;
          const answered = Date.now() - started;
          if (answered > 1_000 || health > 1_000) problems.push(`session.exec with a 100 KB ${field}: answered after ${answered} ms, /healthz after ${health} ms (both should take milliseconds)`);
        }
      } finally {
        await channel.close();
      }
      return problems;
    },
  },
  {
    checks: "two requests in flight with one id each get a valid answer (a refusal counts), never internal_error",
    async run(target) {
      const problems: string[] = [];
      const channel = await tauChannel(target);
      try {
        for (let i = 0; i < 20; i++) {
          const id = `dup-${i}`;
          const answers: any[] = [];
          const both = new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`timed out waiting for both answers to ${id}`)), 10_000);
            const stop = channel.onMessage((text) => {
              const m = JSON.parse(text);
              if (m?.type !== "response" || m.id !== id) return;
              answers.push(m);
              if (answers.length === 2) {
                clearTimeout(timer);
                stop();
                resolve();
              }
            });
          });
          channel.sendText(request(id, "session.list", {}));
          channel.sendText(request(id, "session.snapshot", { sessionId: "no-such-session" }));
          await both.catch((err: Error) => problems.push(err.message));
          for (const answer of answers) {
            const valid = checkTauMessage(answer, "session.list").length === 0 || checkTauMessage(answer, "session.snapshot").length === 0;
            if (!valid || answer.error?.code === "internal_error") problems.push(`answer to the duplicate id ${id}: ${JSON.stringify(answer).slice(0, 300)}`);
          }
        }
      } finally {
        await channel.close();
      }
      return problems;
    },
  },
  invalidUtf8Logging("/tau"),
];
