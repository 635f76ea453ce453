import { describe, expect, it } from "vitest";
import { expectContiguous, expectOneTerminalPerTurn, waitForTerminal } from "../../support/ask-events.js";
import { AskTestClient } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { docBlock } from "../../support/docs.js";
import { freePort } from "../../support/free-port.js";
import { listeningOn, nginxBinary, nginxExample, startTestNginx } from "../../support/nginx.js";
import { startReplicaSet, until } from "../../support/replica-set.js";

/**
 * The documented three-replica example (docs/deployment.md): nginx (the "Behind nginx" configuration with the replicas'
 * `upstream` block) in front of three gateway replicas on one Redis, no sticky sessions. A client
 * whose replica is killed reconnects through the same nginx address, lands on whichever replica
 * nginx picks, resumes with its cursor and misses nothing.
 */

const cleanups = cleanupsAfterEach();

/** The documented nginx configuration with its upstream block replaced by the replicas' one, for these ports. */
function replicasSite(listenPort: number, replicaPorts: string[]): string {
  const site = nginxExample();
  const upstream = docBlock("docs/deployment.md", "upstream tau_gateway {\n    server 10.0.0.11:8080;");
  const servers = [...upstream.matchAll(/server \S+;/g)];
  expect(servers, "the example's three replicas").toHaveLength(3);
  let replaced = upstream;
  servers.forEach((match, i) => (replaced = replaced.replace(match[0], `server 127.0.0.1:${replicaPorts[i]};`)));
  const withUpstream = site.replace(/upstream tau_gateway \{[\s\S]*?\}/, replaced);
  expect(withUpstream).not.toBe(site);
  return listeningOn(withUpstream, listenPort);
}

describe.skipIf(!nginxBinary)(`three replicas behind nginx${nginxBinary ? "" : " (skipped: nginx is not installed)"}`, () => {
  it(
    "a client reconnecting through nginx after its replica was killed resumes with its cursor and misses nothing",
    async () => {
      const set = await startReplicaSet(cleanups, { replicas: 3 });
      const ports = set.replicas.map((r) => new URL(r.baseUrl).port);
      const nginx = await startTestNginx(replicasSite(await freePort(), ports));
      cleanups.push(() => nginx.stop());
      const base = nginx.base;
      const wsUrl = `${base.replace("http://", "ws://")}/rpc`;

      const connect = async () => {
        const client = await AskTestClient.websocket(wsUrl);
        cleanups.push(() => client.socket.terminate());
        client.socket.on("error", () => undefined);
        await client.request("initialize", { client: { name: "through-nginx", version: "1" } });
        return client;
      };
      const first = await connect();
      const { session } = await first.request("session/create", {});
      const sessionId = session.sessionId as string;
      await first.request("session/subscribe", { sessionId });
      const { turnId } = await first.request("session/send", { sessionId, content: `/sleep 1000\n${Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ")}` });
      await first.waitFor(() => first.eventsOf(sessionId).some((e) => e.type === "turn.started"), "the turn to start", 30_000);

      // The replica that owns the Tau host dies mid-turn and the client loses its connection (whichever
      // replica nginx had given it to): it comes back through the same address with its cursor.
      const owner = set.replicas[0]!;
      const seen = [...first.eventsOf(sessionId)];
      owner.child.kill("SIGKILL");
      await owner.exit;
      first.socket.terminate();

      // Reconnect through the same address until nginx hands the client to a live replica.
      const again = await until(() => connect().catch(() => undefined), "a live replica through nginx");
      await again.request("session/subscribe", { sessionId, afterSeq: seen.at(-1)!.seq });
      await waitForTerminal(again, sessionId, turnId);
      const all = [...seen, ...again.eventsOf(sessionId)];
      expectContiguous(all);
      expectOneTerminalPerTurn(all);
      expect(again.invalid).toEqual([]);
    },
    180_000,
  );
});
