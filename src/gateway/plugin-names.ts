/**
 * Names of the plugins that decorate the root instance for the others, as a plugin lists them in
 * its `dependencies`: Fastify checks each one when the dependent plugin is registered, so a route
 * registered without what it relies on fails at startup, naming what is missing.
 */
export const PLUGIN = {
  services: "tau-gateway-services",
  metrics: "tau-gateway-metrics",
  /** Registered by the client-sockets plugin; decorates `websocketServer`. */
  websocket: "@fastify/websocket",
  clientSockets: "tau-gateway-client-sockets",
  networkLimits: "tau-gateway-network-limits",
  requestId: "tau-gateway-request-id",
  accessControl: "tau-gateway-access-control",
  drain: "tau-gateway-drain",
  callGates: "tau-gateway-call-gates",
} as const;
