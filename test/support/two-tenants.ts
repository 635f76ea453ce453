import { TokenRegistry } from "../../src/gateway/auth/tokens.js";

/** The tokens of the tenant tests: alice in tenant A, bob in tenant B, and an operator. */
export interface TwoTenantTokens {
  alice: string;
  bob: string;
  operator: string;
}

/** The tokens file's entries for alice (tenant-a), bob (tenant-b) and the operator. */
export function twoTenantEntries(tokens: TwoTenantTokens): object[] {
  return [
    { id: "alice", token: tokens.alice, tenant: "tenant-a" },
    { id: "bob", token: tokens.bob, tenant: "tenant-b" },
    { id: "operator", token: tokens.operator, tenant: "operations", operator: true },
  ];
}

/** Those entries read as the gateway reads a tokens file. */
export function twoTenantRegistry(tokens: TwoTenantTokens): TokenRegistry {
  return TokenRegistry.parse(JSON.stringify(twoTenantEntries(tokens)), "tokens.json");
}
