/**
 * What a client sees of a protocol, read out of a schema bundle: every method it sends or receives
 * with the schema of its params and of its result. `schema diff` compares two of these; the bundle
 * readers (bundle-readers.ts) make them from the different bundle layouts.
 */

/** A JSON Schema node (or a boolean schema) inside a bundle document. */
export type SchemaNode = Record<string, unknown> | boolean;

/**
 * Who sends a method, from the client's side: `request`/`notification` the client sends,
 * `server-request`/`server-notification` it receives (Tau's server messages are server
 * notifications named by their `type`).
 */
export type MethodKind = "request" | "notification" | "server-request" | "server-notification";

export interface SurfaceMethod {
  kind: MethodKind;
  name: string;
  /** The params (for a Tau server message: the whole message), when the bundle defines them. */
  params?: SchemaNode;
  /** The result of a request, when the bundle defines it (a request without one is warned about). */
  result?: SchemaNode;
}

export interface Surface {
  /** Which layout the bundle was read as (for the report). */
  layout: string;
  /** The whole document, against which `$ref`s resolve. */
  document: Record<string, unknown>;
  methods: Map<string, SurfaceMethod>;
  /**
   * What every message of a kind carries besides its method and params, by the name of the union
   * that says so: the official Codex `ServerNotification` has `emittedAtMs` beside its `oneOf`.
   */
  envelopes: Map<MethodKind, { name: string; schema: SchemaNode }>;
  /** What the reader could not settle (a request whose result two definitions fit equally), with the method it is about. */
  warnings: Array<{ method: string; text: string }>;
}

export const methodKey = (kind: MethodKind, name: string) => `${kind} ${name}`;

/** Whether the client sends the params (and receives the result), or the other way round. */
export const clientSends = (kind: MethodKind) => kind === "request" || kind === "notification";
