import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { rpcError } from "../../support/ask-client.js";
import { waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import type { ServingCli } from "../../support/cli.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { startReplicaSet, type ReplicaSet } from "../../support/replica-set.js";
import { snapshotOnHost, userTexts } from "../../support/tau-client.js";

/**
 * A relay's prompt sent again under its key (`tauGatewayRequestKey`, after its connection was cut)
 * to another replica than the first, every part a real process on a real redis-server: the repeat
 * is answered with what the first got, and Tau has the prompt once — for a prompt that started a
 * turn, one that steered a running one (which Tau has no id for), sent one after the other or both
 * at once, in Ask and in Codex.
 */

const cleanups = cleanupsAfterEach();
const TEST_TIMEOUT = 120_000;

async function twoReplicas() {
  const set = await startReplicaSet(cleanups, { replicas: 2 });
  const [a, b] = set.replicas as [ServingCli, ServingCli];
  const [onA, onB] = await Promise.all([set.client(a), set.client(b)]);
  for (const client of [onA, onB]) await client.request("initialize", { client: { name: "recall", version: "1" } });
  const { session } = await onA.request("session/create", {});
  const sessionId = session.sessionId as string;
  for (const client of [onA, onB]) await client.request("session/subscribe", { sessionId });
  return { set, a, b, onA, onB, sessionId };
}

const userMessages = async (set: ReplicaSet, sessionId: string) => userTexts(await snapshotOnHost(set.hostUrl, sessionId));

describe("a relay's prompt repeated on another replica", () => {
  it(
    "Ask session/send: the repeat on replica B answers as the first on A did, and Tau has the message once",
    async () => {
      const { set, onA, onB, sessionId } = await twoReplicas();
      const params = { sessionId, content: "once across replicas", tauGatewayRequestKey: randomUUID() };
      const first = await onA.request("session/send", params);
      expect(first).toEqual(expect.objectContaining({ accepted: true, turnId: params.tauGatewayRequestKey }));
      expect(await onB.request("session/send", params)).toEqual(first);
      await waitForTerminal(onA, sessionId, first.turnId);
      expect(await userMessages(set, sessionId)).toEqual(["once across replicas"]);
    },
    TEST_TIMEOUT,
  );

  it(
    "Ask session/send steering a running turn, sent to both replicas at once: one answer for both, steered in once",
    async () => {
      const { set, onA, onB, sessionId } = await twoReplicas();
      const running = await onA.request("session/send", { sessionId, content: "/sleep 1500" });
      await onA.waitFor(() => onA.eventsOf(sessionId).some((e) => e.type === "turn.started"), "the turn to run");
      const params = { sessionId, content: "steered once", tauGatewayRequestKey: randomUUID() };
      const [onFirst, onSecond] = await Promise.all([onA.request("session/send", params), onB.request("session/send", params)]);
      expect(onFirst).toEqual(expect.objectContaining({ accepted: true }));
      expect(onSecond).toEqual(onFirst);
      await waitForTerminal(onA, sessionId, running.turnId);
      expect((await userMessages(set, sessionId)).filter((text) => text === "steered once")).toHaveLength(1);
    },
    TEST_TIMEOUT,
  );

  it(
    "Ask session/send: the same key with other params on the other replica is refused, naming the key",
    async () => {
      const { onA, onB, sessionId } = await twoReplicas();
      const key = randomUUID();
      await onA.request("session/send", { sessionId, content: "first", tauGatewayRequestKey: key });
      const refused = await rpcError(onB.request("session/send", { sessionId, content: "other", tauGatewayRequestKey: key }));
      expect(refused).toEqual(expect.objectContaining({ code: -32602, message: expect.stringContaining("tauGatewayRequestKey: the request key was already used for a different session/send request") }));
    },
    TEST_TIMEOUT,
  );

  it(
    "Codex turn/start: the repeat on replica B answers with the turn A started, and Tau has the message once",
    async () => {
      const { set, a, b, onA, sessionId } = await twoReplicas();
      const codex = async (replica: ServingCli) => {
        const client = await CodexTestClient.websocket(replica.baseUrl.replace("http://", "ws://"));
        cleanups.push(() => client.socket.terminate());
        await client.initialize();
        await client.request("thread/resume", { threadId: sessionId });
        return client;
      };
      const [codexA, codexB] = [await codex(a), await codex(b)];
      const params = { threadId: sessionId, input: [{ type: "text", text: "codex once across replicas", text_elements: [] }], tauGatewayRequestKey: randomUUID() };
      const first = await codexA.request("turn/start", params);
      expect(first.turn.id).toBe(params.tauGatewayRequestKey);
      expect(await codexB.request("turn/start", params)).toEqual(first);
      await waitForTerminal(onA, sessionId, first.turn.id);
      expect(await userMessages(set, sessionId)).toEqual(["codex once across replicas"]);
    },
    TEST_TIMEOUT,
  );
});
