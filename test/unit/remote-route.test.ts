import { describe, expect, it } from "vitest";
import { GATEWAY_ROUTES } from "../../src/cli/dialects/loaded.js";
import { remoteRoute as routeOn } from "../../src/cli/remote.js";

const ROUTES = { ask: "/rpc", codex: "/", acp: "/acp" } as const;
/** The --remote URL parser of a dialect's command, among the gateway's routes. */
const remoteRoute = (dialect: keyof typeof ROUTES) => routeOn(ROUTES[dialect], GATEWAY_ROUTES);

/** `--remote URL`: the gateway's base URL, to which each command adds its dialect's route. */
describe("the --remote URL", () => {
  it("adds the command's route to the gateway's base URL, http(s) read as ws(s)", () => {
    expect(remoteRoute("acp")("ws://127.0.0.1:8080")).toBe("ws://127.0.0.1:8080/acp");
    expect(remoteRoute("ask")("http://127.0.0.1:8080/")).toBe("ws://127.0.0.1:8080/rpc");
    expect(remoteRoute("codex")("https://gateway.example")).toBe("wss://gateway.example/");
    // A reverse proxy's prefix stays in front of the route.
    expect(remoteRoute("acp")("wss://example.com/tau-gateway/")).toBe("wss://example.com/tau-gateway/acp");
    expect(remoteRoute("codex")("wss://example.com/tau-gateway")).toBe("wss://example.com/tau-gateway/");
  });

  it("takes a URL that already ends with the command's route as it is", () => {
    expect(remoteRoute("acp")("ws://127.0.0.1:8080/acp")).toBe("ws://127.0.0.1:8080/acp");
    expect(remoteRoute("ask")("ws://127.0.0.1:8080/rpc/")).toBe("ws://127.0.0.1:8080/rpc");
  });

  it("refuses another dialect's route, other schemes and a token in the URL, saying why", () => {
    expect(() => remoteRoute("ask")("ws://127.0.0.1:8080/acp")).toThrow("names the /acp route; give the gateway's base URL (ws://HOST:PORT), this command adds /rpc");
    expect(() => remoteRoute("codex")("ws://127.0.0.1:8080/rpc")).toThrow("names the /rpc route");
    expect(() => remoteRoute("acp")("ws://127.0.0.1:8080/tau")).toThrow("names the /tau route");
    expect(() => remoteRoute("acp")("unix:/tmp/socket")).toThrow("must be a ws://, wss://, http:// or https:// URL");
    expect(() => remoteRoute("acp")("127.0.0.1:8080")).toThrow();
    expect(() => remoteRoute("acp")("ws://127.0.0.1:8080/?access_token=secret")).toThrow("put the token in --remote-token, not in the URL");
  });
});
