/**
 * Tau's own built-in tools (spec §7.1). A client tool may not carry one of these names: Tau
 * answers such an `initialize` with `internal_error`, and the gateway refuses such a command tool
 * when it reads its tools file. The names are the older client-tool broker's reserved set (less
 * its goal tools, which no available source names) plus the intrinsic `tau_docs` the docs
 * reserve; the v18 broker's own set was not available to read.
 */
export interface HostToolEntry {
  name: string;
  /** Where the name is documented as reserved. */
  reservedBy: "client-tool broker" | "docs";
  /** May be granted to an ephemeral context (`session.ephemeral.create` `tools`, spec §4.6). */
  ephemeral?: boolean;
}

export const tauHostTools: readonly HostToolEntry[] = [
  { name: "bash", reservedBy: "client-tool broker", ephemeral: true },
  { name: "write", reservedBy: "client-tool broker", ephemeral: true },
  { name: "edit", reservedBy: "client-tool broker", ephemeral: true },
  { name: "view_image", reservedBy: "client-tool broker", ephemeral: true },
  { name: "spawn_agent", reservedBy: "client-tool broker" },
  { name: "send_input_to_agent", reservedBy: "client-tool broker" },
  { name: "wait_for_agents", reservedBy: "client-tool broker" },
  { name: "list_agents", reservedBy: "client-tool broker" },
  { name: "interrupt_agent", reservedBy: "client-tool broker" },
  { name: "web", reservedBy: "client-tool broker", ephemeral: true },
  { name: "nook", reservedBy: "client-tool broker" },
  { name: "tau_docs", reservedBy: "docs" },
];

/** Every host tool name: what a client tool must not be called. */
export const HOST_TOOL_NAMES: readonly string[] = tauHostTools.map((tool) => tool.name);

/** The host tools an ephemeral context may be given, in registry order. */
export const EPHEMERAL_TOOL_NAMES: readonly string[] = tauHostTools.filter((tool) => tool.ephemeral).map((tool) => tool.name);
