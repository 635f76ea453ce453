import type { AskTestClient } from "../../support/ask-client.js";
import { describeRelayCase, relayCases, type FaultStep, type RelayCase } from "../generators/relay-faults.js";
import { startRelayLink, type RelayLink } from "../infra/relay-link.js";
import { answerProblems, hasTerminal, idle, runOnceProblems, streamProblems, waitOrProblem } from "../oracles/relay-oracle.js";
import { newStats, type FuzzTarget } from "../target.js";

/**
 * `tau-gateway stdio --remote URL`: Ask over stdio relayed to a running gateway through a loopback
 * TCP proxy, with faults between the relay and the gateway (generators/relay-faults.ts) while a
 * session's prompts stream. The relay resumes losslessly (docs/operations.md): every request is
 * answered once, every marked prompt runs once, the client's stream has every event and every
 * character once (oracles/relay-oracle.ts). A case costs about ten of another target's (caseCost): 4 in `npm test`.
 */

type SendOutcome = { ok: true; turnId: string } | { ok: false; message: string };

const target: FuzzTarget = {
  name: "stdio --remote (relay through a faulty link)",
  dialect: "ask relay",
  // A case streams a few replies through reconnects: about as long as ten of another target's.
  caseCost: 10,
  properties: [
    {
      checks: "the gateway behind the relay is up and nothing invalid reached its upstream",
      async run(running) {
        const link = (running as unknown as { link: RelayLink }).link;
        const problems: string[] = [];
        if (!link.gateway.alive()) problems.push(`the gateway exited (${JSON.stringify(await link.gateway.exited)}); stderr:\n${link.gateway.stderr().slice(-4_000)}`);
        const { tally } = link.recorder;
        if (tally.violationCount) problems.push(`${tally.violationCount} invalid message(s) reached the upstream, e.g.:\n${tally.violations.join("\n")}`);
        return problems;
      },
    },
  ],
  async start({ upstream, settings }) {
    const link = await startRelayLink(upstream.cwd);
    const { client } = link;
    const timeoutMs = settings.answerTimeoutMs * 2;
    const stats = newStats();
    let caseNo = 0;
    try {
      await client.request("initialize", { client: { name: "fuzz-relay", version: "1" } });
    } catch (err) {
      await link.stop();
      throw err;
    }

    const openSession = async () => {
      const { session } = await client.request("session/create", {});
      const sessionId = session.sessionId as string;
      const observer = await link.observe(sessionId);
      await client.request("session/subscribe", { sessionId, afterSeq: 0 });
      return { sessionId, observer };
    };

    // Closed when done: the relay resumes every open subscription on each new link, and the gateway
    // takes at most 64 requests in flight on one connection (the resumes beyond fail).
    const closeSession = async (sessionId: string): Promise<string[]> => {
      await client.request("session/close", { sessionId }).catch(() => undefined);
      return waitOrProblem(client, () => client.eventsOf(sessionId).some((e) => e.type === "session.ended"), "session.ended through the relay", timeoutMs);
    };

    const runCase = async (value: unknown): Promise<string[]> => {
      const { prompts, steps } = value as RelayCase;
      const n = ++caseNo;
      stats.cases++;
      const receivedFrom = client.received.length;
      const invalidFrom = client.invalid.length;
      const firstId = client.lastRequestId + 1;
      const { sessionId, observer } = await openSession();
      const problems: string[] = [];
      try {
        const markers = prompts.map((_, i) => `<case ${n} prompt ${i}>`);
        const outcomes: Array<SendOutcome | undefined> = prompts.map(() => undefined);
        const sendIds = prompts.map((text, i) => {
          client.request("session/send", { sessionId, content: `${markers[i]} ${text}` }).then(
            (result: { turnId: string }) => (outcomes[i] = { ok: true, turnId: result.turnId }),
            (err: Error) => (outcomes[i] = { ok: false, message: err.message }),
          );
          return client.lastRequestId;
        });
        for (const step of steps) {
          problems.push(...(await strike(link, observer, sessionId, step, timeoutMs)));
          if (problems.length) break;
        }
        const unanswered = () => sendIds.filter((id, i) => !outcomes[i]).map((id) => `request ${id}`).join(", ");
        // On the answers as they arrive (the outcomes are set a microtask later).
        const hasAnswer = (id: number) => client.received.some((m) => (m as { id?: unknown }).id === id && !("method" in (m as object)));
        const answered = await waitOrProblem(client, () => sendIds.every(hasAnswer), "an answer to every session/send", timeoutMs);
        await Promise.resolve();
        if (answered.length) problems.push(`no answer to the session/send ${unanswered()} (of ${sendIds.join(", ")}) within ${timeoutMs} ms`);
        outcomes.forEach((outcome, i) => {
          if (outcome && !outcome.ok) problems.push(`the session/send marked ${markers[i]} was answered with an error: ${outcome.message}`);
        });
        const turnIds = outcomes.flatMap((o) => (o?.ok ? [o.turnId] : []));
        const ended = (events: AskTestClient) => () => turnIds.every((id) => hasTerminal(events.eventsOf(sessionId), id));
        problems.push(...(await waitOrProblem(client, ended(client), "the end of every accepted turn, through the relay", timeoutMs)));
        problems.push(...(await waitOrProblem(observer, () => ended(observer)() && idle(observer.eventsOf(sessionId)), "the session idle on the gateway", timeoutMs)));
        // Against the gateway's log as it is when the client has caught up: events can still follow
        // the last turn's end (the session's own updates), and the client is owed those too.
        // The gateway's log is held to as long as it was then: a session update that reaches the
        // gateway after that moment is still on its way to the client when the streams are compared.
        let caughtAt = Infinity;
        const caughtUp = () => {
          const now = idle(observer.eventsOf(sessionId)) && client.eventsOf(sessionId).length >= observer.eventsOf(sessionId).length;
          if (now) caughtAt = Math.min(caughtAt, observer.eventsOf(sessionId).length);
          return now;
        };
        // Checked as either side receives (the last event may reach the client before the observer).
        const caught = (side: AskTestClient) => side.waitFor(caughtUp, "every event of the session through the relay", timeoutMs).then(() => true, () => false);
        if (!(await Promise.race([caught(client), caught(observer)]))) {
          problems.push(`the client saw ${client.eventsOf(sessionId).length} events of the session through the relay within ${timeoutMs} ms, the gateway has ${observer.eventsOf(sessionId).length}`);
        }

        const received = client.received.slice(receivedFrom);
        stats.requests += client.lastRequestId - firstId + 1;
        stats.responses += received.filter((m) => !("method" in (m as object))).length;
        const ids = Array.from({ length: client.lastRequestId - firstId + 1 }, (_, i) => firstId + i);
        problems.push(...answerProblems(received, ids, client.lastRequestId));
        problems.push(...runOnceProblems(await link.userMessages(sessionId), markers));
        problems.push(...streamProblems(client.eventsOf(sessionId), observer.eventsOf(sessionId).slice(0, caughtAt)));
        problems.push(...client.invalid.slice(invalidFrom).map((m) => `an invalid message reached the client: ${m}`));
        problems.push(...(await closeSession(sessionId)));
      } finally {
        observer.close();
      }
      if (!link.relay.alive()) problems.push(`the relay exited (${JSON.stringify(await link.relay.exited)}); stderr:\n${link.relay.stderr().slice(-4_000)}`);
      return problems;
    };

    return {
      gateway: link.relay,
      baseUrl: undefined,
      link,
      cases: relayCases(),
      describeCase: (value) => describeRelayCase(value as RelayCase),
      runCase,
      normalSession: async () => {
        const { sessionId, observer } = await openSession();
        observer.close();
        const { turnId } = await client.request("session/send", { sessionId, content: "hello through the relay" });
        await client.waitFor(() => hasTerminal(client.eventsOf(sessionId), turnId), "the end of a normal turn through the relay", timeoutMs);
        const closing = await closeSession(sessionId);
        if (closing.length) throw new Error(closing.join("\n"));
      },
      quiesce: async () => undefined,
      stats,
      stop: () => link.stop(),
    };
  },
};

/** Waits until the gateway has streamed `atDelta` deltas of the session (or is idle), then strikes. */
async function strike(link: RelayLink, observer: AskTestClient, sessionId: string, { atDelta, fault }: FaultStep, timeoutMs: number): Promise<string[]> {
  const events = () => observer.eventsOf(sessionId);
  const problems = await waitOrProblem(observer, () => events().filter((e) => e.type === "model.streaming").length >= atDelta || idle(events()), `delta ${atDelta} of the session on the gateway`, timeoutMs);
  if (problems.length) return problems;
  if (fault.kind === "drop") link.proxy.drop();
  else if (fault.kind === "restart") await link.proxy.restart();
  else {
    const from = events().length;
    link.proxy.blackhole({ hold: fault.hold, only: fault.only });
    // For a while: until the gateway made more of the session, went idle, or the relay's bytes went nowhere.
    await Promise.race([waitOrProblem(observer, () => events().length >= from + fault.forEvents || idle(events()), "the gateway going on during a blackhole", timeoutMs), link.proxy.dropped()]);
    link.proxy.heal();
    if (!fault.hold) link.proxy.drop();
  }
  return [];
}

export default target;
