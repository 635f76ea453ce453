import type { Schema, VersionRange } from "./schema.js";

/**
 * The shape of the registry: every method, message, event and error code of a dialect as plain
 * data. Code generation, validation, the host, the bridge and the CLI all read these entries;
 * nothing else in the project may describe a wire shape.
 */

/** Who sends the message. `client` = the client of the dialect (Tau client / Ask client / ACP client). */
export type Sender = "client" | "server";

export type EntryKind =
  | "request" // client → server, answered with a response
  | "reverse-request" // server → client, answered by the client (Ask interop)
  | "notification" // one-way, no response
  | "server-message" // Tau: one of the server → client message types
  | "event"; // Ask: a `session/event` payload type

interface EntryBase {
  name: string;
  description: string;
  /** Versions the entry exists in (Tau only; Ask and Codex entries exist in every version of their dialect). */
  versions?: VersionRange;
  /** Why the version range is what it is, e.g. "removed somewhere in 16–18". */
  versionNote?: string;
  /** Defined by this gateway rather than by the dialect's own hosts. */
  extension?: boolean;
  /**
   * Base of the generated definition names when it cannot be the wire name: a wire name used by
   * both directions (a reverse request a client may also send as a query; MCP's
   * notifications/cancelled and notifications/progress) needs two sets of types.
   */
  typeName?: string;
}

/** What a client-sent request or notification of a JSON-RPC dialect may need of the connection. */
interface ClientCallFacts {
  /** A connection may send it before its handshake is done (the handshake itself, say). */
  beforeInitialize?: boolean;
  /** Only a connection that opted in to the dialect's experimental API may send it (Codex: capabilities.experimentalApi). */
  experimental?: boolean;
  /**
   * Params fields only the dialect's experimental API has: a value for one (null counts as none)
   * needs the opt-in, and a refusal names it `<method>.<field>`. The params schema need not list them.
   */
  experimentalFields?: readonly string[];
}

/** A request/response pair. `sender` is who sends the request. */
export interface MethodEntry extends EntryBase, ClientCallFacts {
  kind: "request" | "reverse-request";
  sender: Sender;
  params: Schema;
  result: Schema;
  /**
   * The request only settles or cancels work already running (a client-tool answer, an
   * interrupt): held back behind the work it would let finish — by an in-flight limit, say — it
   * would deadlock that work.
   */
  settles?: boolean;
  /** How the dialect's own host words invalid params of this request, when it has fixed words for them. */
  invalidParams?: ParamsWording;
}

/**
 * A host's fixed sentences for invalid params (Tau: one per method and field, checked in the
 * host's own order). Paths are exact: a problem deeper inside a field is not that field's.
 */
export interface ParamsWording {
  /** Said for any invalid params (a method whose params must be an empty object). */
  always?: string;
  /** Said when params is not an object at all. */
  notObject?: string;
  /** The first field in this order with a problem at exactly its path; `withIssues`: the issues follow the sentence. */
  fields: Array<{ path: string[]; message: string; withIssues?: boolean }>;
  /** Said otherwise, followed by the issues. */
  otherwise: string;
}

export interface NotificationEntry extends EntryBase, ClientCallFacts {
  kind: "notification";
  sender: Sender;
  params: Schema;
}

/** A Tau server → client message type; `message` is the whole message object schema. */
export interface ServerMessageEntry extends EntryBase {
  kind: "server-message";
  sender: "server";
  message: Schema;
}

/** An Ask event type carried inside `session/event`; `payload` is the event's payload schema. */
export interface EventEntry extends EntryBase {
  kind: "event";
  sender: "server";
  payload: Schema;
}

export interface ErrorCodeEntry {
  /** Symbolic name (`not_found`, `session_not_found`, …). */
  name: string;
  /** The wire value: Tau uses the name itself, Ask/JSON-RPC a number. */
  code: string | number;
  description: string;
  extension?: boolean;
  versions?: VersionRange;
}

/**
 * One dialect's registry. `Name` is the dialect's name; the dialects are the registries index.ts
 * lists, and `Dialect` there is the union of their names.
 */
export interface DialectRegistry<Name extends string = string> {
  dialect: Name;
  title: string;
  /** Versions a bundle is generated for, oldest first; the last one is current. */
  versions: ReadonlyArray<number | string>;
  /** Named shared types, referenced from entries with `ref(name)`. */
  definitions: Record<string, Schema>;
  methods: MethodEntry[];
  notifications: NotificationEntry[];
  serverMessages: ServerMessageEntry[];
  events: EventEntry[];
  errors: ErrorCodeEntry[];
  /** How an entry's params/result/payload (given as references) sit inside a whole wire message. */
  frame: MessageFrames;
}

/** Builders for whole wire messages, so the envelope of a dialect is written exactly once. */
export interface MessageFrames {
  /** A request message carrying `params` (a request from `entry.sender`). */
  request(entry: MethodEntry | NotificationEntry, params: Schema): Schema;
  /** A success response carrying `result`. */
  response(entry: MethodEntry, result: Schema): Schema;
  /** An event envelope carrying `payload` (Ask only). */
  event?(entry: EventEntry, payload: Schema): Schema;
  /**
   * Definitions of whole response messages that travel in both directions (JSON-RPC responses,
   * matched to their requests by id); a Tau server sends its responses as a server message instead.
   */
  responseMessages?: readonly string[];
}
