import { FOREIGN_CHARSETS } from "../generators/http-bodies.js";
import type { RunProperty } from "../target.js";

/** `POST /rpc` with a JSON body in another charset than UTF-8 is refused, not decoded as UTF-8. */
export const foreignCharsets: RunProperty = {
  checks: "a JSON body declared in another charset than UTF-8 is refused with 415",
  async run(target) {
    const problems: string[] = [];
    for (const contentType of FOREIGN_CHARSETS) {
      const body = new Uint8Array(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}', "utf16le"));
      const response = await fetch(`${target.baseUrl}/rpc`, { method: "POST", headers: { "content-type": contentType }, body });
      if (response.status !== 415) problems.push(`${contentType}: HTTP ${response.status} ${await response.text()}`);
    }
    return problems;
  },
};
