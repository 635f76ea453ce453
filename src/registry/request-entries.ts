import type { MethodEntry } from "./model.js";
import type { Schema } from "./schema.js";

/**
 * The two kinds of request entry every dialect's registry lists: a request the client sends, and a
 * reverse request the server sends the client on the same connection.
 */

export const clientRequest = (name: string, description: string, params: Schema, result: Schema): MethodEntry => ({
  kind: "request",
  sender: "client",
  name,
  description,
  params,
  result,
});

export const serverRequest = (name: string, description: string, params: Schema, result: Schema): MethodEntry => ({
  kind: "reverse-request",
  sender: "server",
  name,
  description,
  params,
  result,
});
