import { describe, expect, it } from "vitest";
import { offeredTo } from "../../src/bridge/decision-offers.js";
import { SessionRoles } from "../../src/bridge/session-roles.js";
import { MemorySessionRoles, type Deciders, type SessionRoleRecord } from "../../src/store/session-roles.js";

/**
 * An offer round (every connection of a session asked about one interaction at once, each on its
 * own) reads the session's roles and the interaction's deciders once, whatever number of
 * connections, and each connection is offered what it would be offered alone; a later round reads
 * them again, so a role granted in between counts.
 */

const SESSION = "ses_offers";

/** The real memory store, counting its reads. */
class CountedRoles extends MemorySessionRoles {
  reads = 0;
  override read(sessionId: string): Promise<SessionRoleRecord> {
    this.reads++;
    return super.read(sessionId);
  }
}

async function setup(deciders: Deciders, needsPrincipal = false) {
  const store = new CountedRoles();
  const lookups = { deciders: 0, needsPrincipal: 0 };
  const roles = new SessionRoles(
    store,
    async () => {
      lookups.deciders++;
      return deciders;
    },
    async () => {
      lookups.needsPrincipal++;
      return needsPrincipal;
    },
  );
  await roles.created(SESSION, { tokenId: "own" });
  return { roles, store, lookups };
}

const principals = [{ tokenId: "own" }, { tokenId: "lead" }, { tokenId: "dev" }, { tokenId: "obs", sessionRole: "observer" as const }];
const round = (roles: SessionRoles, interactionId = "act_1") => Promise.all(principals.map((p) => offeredTo(roles, SESSION, p, interactionId)));

describe("an offer round", () => {
  it("reads the roles and the deciders once for every connection asked at once", async () => {
    const { roles, store, lookups } = await setup({ principals: ["lead"], roles: ["owner"] });
    expect(await round(roles)).toEqual([true, true, false, false]);
    expect(store.reads).toBe(1);
    expect(lookups.deciders).toBe(1);
  });

  it("offers each connection what it would be offered alone", async () => {
    const { roles } = await setup({ principals: ["lead"], roles: ["owner"] });
    const alone = [];
    for (const p of principals) alone.push(await offeredTo(roles, SESSION, p, "act_1"));
    expect(alone).toEqual(await round(roles));
  });

  it("reads again in a later round, and for another interaction", async () => {
    const { roles, store, lookups } = await setup("any");
    expect(await round(roles)).toEqual([true, true, true, false]);
    await roles.setRole(SESSION, { tokenId: "own" }, "obs", "controller", "test");
    expect(await round(roles)).toEqual([true, true, true, true]);
    await Promise.all([round(roles, "act_1"), round(roles, "act_2")]);
    expect(store.reads).toBe(4);
    expect(lookups.deciders).toBe(4);
  });

  it("asks once per round whether a caller without a principal may decide", async () => {
    const { roles, lookups } = await setup({ principals: ["lead"], roles: [] }, true);
    expect(await Promise.all([offeredTo(roles, SESSION, undefined, "act_1"), offeredTo(roles, SESSION, undefined, "act_1")])).toEqual([false, false]);
    expect(lookups.needsPrincipal).toBe(1);
  });
});
