import type { DialectEntry } from "./descriptor.js";

/**
 * The client dialects `tau-gateway` serves, in the order `--help` lists their commands: the one
 * list the bridge stack, `serve` (routes, metrics labels) and the CLI's commands iterate. Each
 * entry holds what is needed before its dialect is loaded; its descriptor (descriptor.ts) is in a
 * file of its own, loaded when a command needs it, so `validate` loads none of them.
 */
export const DIALECTS: readonly DialectEntry[] = [
  { route: "/rpc", command: "stdio", summary: "the Ask JSON-RPC surface on stdin/stdout", load: async () => (await import("./ask/descriptor.js")).askDialect },
  { route: "/", command: "app-server", summary: "the Codex app-server protocol on stdin/stdout", load: async () => (await import("./codex/descriptor.js")).codexDialect },
  { route: "/acp", command: "acp", summary: "an Agent Client Protocol agent on stdin/stdout, for editors", load: async () => (await import("./acp/descriptor.js")).acpDialect },
  { route: "/mcp/ws", command: "mcp", summary: "a Model Context Protocol server on stdin/stdout, for MCP hosts", load: async () => (await import("./mcp/descriptor.js")).mcpDialect },
];
