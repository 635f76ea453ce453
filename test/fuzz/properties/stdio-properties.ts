import { GatewayProcess } from "../infra/gateway-process.js";
import { StdioChannel } from "../infra/stdio-channel.js";
import { gatewayArgs } from "../stream-target.js";
import type { RunProperty, TargetContext } from "../target.js";

/** `tau-gateway stdio` properties: signals and floods, each on a process of its own. */

async function freshStdio(context: TargetContext): Promise<{ gateway: GatewayProcess; channel: StdioChannel }> {
  const { process: gateway } = await GatewayProcess.start("stdio", gatewayArgs(context));
  return { gateway, channel: new StdioChannel(gateway.child) };
}

export const stdioProperties: RunProperty[] = [
  {
    checks: "SIGTERM with stdin still open drains and exits 0",
    async run(_target, context) {
      const { gateway, channel } = await freshStdio(context);
      try {
        const pong = new Promise<void>((resolve) => channel.onMessage(() => resolve()));
        channel.sendText(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }));
        await pong;
        gateway.signal("SIGTERM");
        const exit = await Promise.race([gateway.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 15_000))]);
        if (!exit) return ["still running 15 s after SIGTERM (stdin open)"];
        return exit.code === 0 ? [] : [`exited with ${JSON.stringify(exit)} after SIGTERM, expected 0`];
      } finally {
        await gateway.stop(1_000);
      }
    },
  },
  {
    // Requests pipelined without waiting (then stdin closed), as a client piping a file in would.
    checks: "pipelined requests are each answered exactly once, and resident memory grows by less than 512 MB",
    async run(_target, context) {
      const flood = context.settings.sizes.floodMessages;
      const { gateway, channel } = await freshStdio(context);
      const problems: string[] = [];
      try {
        const before = await gateway.memory();
        let peakRss = before.rssBytes;
        const answers = new Map<number, number>();
        let received = 0;
        const all = new Promise<void>((resolve) =>
          channel.onMessage((text) => {
            const m = JSON.parse(text);
            if (typeof m?.id !== "number") return;
            answers.set(m.id, (answers.get(m.id) ?? 0) + 1);
            if (++received >= flood) resolve();
          }),
        );
        for (let id = 1; id <= flood; id++) channel.sendText(JSON.stringify({ jsonrpc: "2.0", id, method: id % 2 ? "session/list" : "ping" }));
        gateway.child.stdin.end();
        const peak = setInterval(() => (peakRss = Math.max(peakRss, gateway.rss().rssBytes)), 250);
        await Promise.race([all, new Promise((r) => setTimeout(r, 120_000))]);
        clearInterval(peak);
        const missing = Array.from({ length: flood }, (_, i) => i + 1).filter((id) => answers.get(id) !== 1);
        if (missing.length) problems.push(`${missing.length} of ${flood} requests not answered exactly once (e.g. ids ${missing.slice(0, 5).join(", ")})`);
        if (peakRss - before.rssBytes > 512 * 1024 * 1024) problems.push(`RSS peaked at ${peakRss} bytes (from ${before.rssBytes})`);
      } finally {
        await gateway.stop(5_000);
      }
      return problems;
    },
  },
];
