import { describe, expect, it } from "vitest";
import { TokenRegistry } from "../../src/gateway/auth/tokens.js";
import { docBlock } from "../support/docs.js";

/** The tokens file's `sessionRole`: a token's role in its tenant's sessions it did not create. */
describe("tokens file sessionRole", () => {
  const parse = (entries: object[]) => TokenRegistry.parse(JSON.stringify(entries), "tokens.json");

  it("is carried to the principal, and absent by default (controller)", () => {
    const tokens = parse([
      { id: "bob", token: "tok-bob", tenant: "team", sessionRole: "observer" },
      { id: "carol", token: "tok-carol", tenant: "team" },
    ]);
    expect(tokens.authenticate("tok-bob")).toEqual({ tokenId: "bob", tenant: "team", sessionRole: "observer" });
    expect(tokens.authenticate("tok-carol")).toEqual({ tokenId: "carol", tenant: "team" });
  });

  it("refuses any other value with the entry and the allowed values named", () => {
    expect(() => parse([{ id: "bob", token: "tok-bob", tenant: "team", sessionRole: "admin" }])).toThrow(
      'entry 0 (id "bob") /sessionRole: must be "controller" or "observer" (the token\'s role in its tenant\'s sessions it did not create), not "admin"',
    );
  });

  it("reads docs/approvals.md's tokens file as the page says: alice a controller by default, bob an observer", () => {
    const tokens = TokenRegistry.parse(docBlock("docs/approvals.md", '[\n  { "id": "alice"'), "tokens.json");
    expect(tokens.authenticate("alice-secret")).toEqual({ tokenId: "alice", tenant: "team" });
    expect(tokens.authenticate("bob-secret")).toEqual({ tokenId: "bob", tenant: "team", sessionRole: "observer" });
  });
});
