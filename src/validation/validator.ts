import { Ajv2019, type ValidateFunction } from "ajv/dist/2019.js";
import type { Dialect, Sender } from "../registry/model.js";
import type { IndexEntry, SchemaIndex } from "../registry/schema-index.js";
import { explain, type ValidationIssue } from "./issues.js";
import { readSchemaFile } from "./schema-files.js";

/**
 * The one ajv instance of the process and everything validated with it. Schemas come from the
 * committed schema/ files (the same ones client CI uses); each definition is compiled once, on
 * first use, and cached. Messages are dispatched on their discriminator (`type` for Tau, `method`
 * or response shape for Ask) to the exact definition, so errors point at the real problem instead
 * of listing every union branch.
 */

export interface ValidationResult {
  ok: boolean;
  /** The method or message type the message was checked as, when known. */
  subject?: string;
  /** The definition it was checked against. */
  definition?: string;
  issues: ValidationIssue[];
}

const valid = (subject?: string, definition?: string): ValidationResult => ({ ok: true, subject, definition, issues: [] });
const invalid = (issues: ValidationIssue[], subject?: string, definition?: string): ValidationResult => ({
  ok: false,
  subject,
  definition,
  issues,
});
const issue = (pointer: string, message: string, keyword = "protocol"): ValidationIssue => ({ pointer, message, keyword });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A validator for one bundle (dialect + version). */
export class BundleValidator {
  private readonly compiledDefinitions = new Map<string, ValidateFunction>();
  private readonly byName = new Map<string, IndexEntry>();
  /** Methods by wire name: one entry per direction (a name may be a request and a reverse request). */
  private readonly methods = new Map<string, IndexEntry[]>();
  private readonly eventTypes = new Map<string, IndexEntry>();

  constructor(
    private readonly ajv: Ajv2019,
    readonly dialect: Dialect,
    readonly version: number | string,
    private readonly schemaId: string,
    entries: IndexEntry[],
  ) {
    for (const e of entries) {
      if (e.kind === "event") this.eventTypes.set(e.name, e);
      else if (e.kind === "server-message") this.byName.set(`message:${e.name}`, e);
      else this.methods.set(e.name, [...(this.methods.get(e.name) ?? []), e]);
    }
  }

  /**
   * The registry entry of a method (request, reverse request or notification) in this version:
   * the one `sender` sends, or without a sender the first the registry lists (client requests come
   * before reverse requests).
   */
  method(name: string, sender?: Sender): IndexEntry | undefined {
    const entries = this.methods.get(name);
    if (!sender) return entries?.[0];
    return entries?.find((e) => e.direction === directionOf(sender));
  }

  serverMessage(type: string): IndexEntry | undefined {
    return this.byName.get(`message:${type}`);
  }

  event(type: string): IndexEntry | undefined {
    return this.eventTypes.get(type);
  }

  hasDefinition(name: string): boolean {
    return this.ajv.getSchema(`${this.schemaId}#/$defs/${name}`) !== undefined;
  }

  /** Validates `value` against a named definition of the bundle. */
  check(definition: string, value: unknown, subject?: string, pointerPrefix = ""): ValidationResult {
    const fn = this.compiled(definition);
    if (fn(value)) return valid(subject, definition);
    const issues = explain(fn.errors).map((i) => ({ ...i, pointer: pointerPrefix + i.pointer }));
    return invalid(issues, subject, definition);
  }

  /** Each definition is compiled once, on first use. */
  private compiled(definition: string): ValidateFunction {
    let fn = this.compiledDefinitions.get(definition);
    if (!fn) {
      fn = this.ajv.getSchema(`${this.schemaId}#/$defs/${definition}`);
      if (!fn) throw new Error(`${this.schemaId}: no definition ${definition}`);
      this.compiledDefinitions.set(definition, fn);
    }
    return fn;
  }

  /**
   * Params of a method `sender` sends. Without `sender`: the client request of that name, else the
   * reverse request (a name both sides send — Ask's interaction/requestPermission — is the client's).
   */
  params(method: string, params: unknown, pointerPrefix = "", sender?: Sender): ValidationResult {
    const entry = this.method(method, sender);
    if (!entry) return invalid([issue(`${pointerPrefix}/method`, `unknown method ${JSON.stringify(method)}`)], method);
    return this.check(entry.definitions.params!, params, method, pointerPrefix);
  }

  /** Result of a method `sender` sends (found as for `params` when `sender` is not given). */
  result(method: string, result: unknown, pointerPrefix = "", sender?: Sender): ValidationResult {
    const entry = this.method(method, sender);
    if (!entry?.definitions.result) return invalid([issue(pointerPrefix || "/", `no result is defined for ${JSON.stringify(method)}`)], method);
    return this.check(entry.definitions.result, result, method, pointerPrefix);
  }

  eventPayload(type: string, payload: unknown, pointerPrefix = ""): ValidationResult {
    const entry = this.event(type);
    if (!entry) return invalid([issue(`${pointerPrefix}/type`, `unknown event type ${JSON.stringify(type)}`)], type);
    return this.check(entry.definitions.payload!, payload, type, pointerPrefix);
  }

  /**
   * Validates a whole message sent by `sender`. `respondsTo` names the method of the request a
   * response answers (found by id in the caller's correlation table); without it a response is
   * checked only as a response envelope.
   */
  message(sender: Sender, message: unknown, respondsTo?: string): ValidationResult {
    if (!isObject(message)) return invalid([issue("", "message must be a JSON object", "type")]);
    return this.dialect === "tau" ? this.tauMessage(sender, message, respondsTo) : this.jsonRpcMessage(sender, message, respondsTo);
  }

  private tauMessage(sender: Sender, msg: Record<string, unknown>, respondsTo?: string): ValidationResult {
    if (msg.version !== this.version) {
      return invalid([issue("/version", `must be ${this.version} (got ${JSON.stringify(msg.version)})`, "const")], describeSubject(msg));
    }
    if (sender === "client") {
      if (msg.type !== "request") return invalid([issue("/type", 'must be "request"', "const")], describeSubject(msg));
      const envelope = this.check("RequestEnvelope", msg);
      if (!envelope.ok) return { ...envelope, subject: typeof msg.method === "string" ? msg.method : undefined };
      const method = msg.method as string;
      const entry = this.method(method, "client");
      if (!entry || entry.kind !== "request") return invalid([issue("/method", `unknown method ${JSON.stringify(method)}`)], method);
      return this.check(entry.definitions.request!, msg, method);
    }
    const type = msg.type;
    if (typeof type !== "string") return invalid([issue("/type", "must be a string", "type")]);
    if (type === "response") {
      if (msg.ok === false) return this.check("ErrorResponse", msg, respondsTo ?? "response");
      if (msg.ok !== true) return invalid([issue("/ok", "must be true or false", "type")], respondsTo ?? "response");
      const request = respondsTo ? this.method(respondsTo, "client") : undefined;
      if (request) return this.check(request.definitions.response!, msg, respondsTo);
      return this.check("SuccessResponse", msg, "response");
    }
    const entry = this.serverMessage(type);
    if (!entry) return invalid([issue("/type", `unknown server message type ${JSON.stringify(type)}`)], type);
    return this.check(entry.definitions.message!, msg, type);
  }

  /** A JSON-RPC dialect (Ask, Codex): requests and notifications by `method`, responses by the method of the request they answer. */
  private jsonRpcMessage(sender: Sender, msg: Record<string, unknown>, respondsTo?: string): ValidationResult {
    if ("jsonrpc" in msg && msg.jsonrpc !== "2.0") return invalid([issue("/jsonrpc", 'must be "2.0" when present', "const")]);
    if (!("method" in msg)) {
      if ("error" in msg) return this.check("ErrorResponse", msg, respondsTo ?? "response");
      if (!("result" in msg)) return invalid([issue("", "must have a method (request) or a result or error (response)", "required")]);
      // A response travels opposite to the request it answers.
      const entry = respondsTo ? this.method(respondsTo, sender === "client" ? "server" : "client") : undefined;
      if (entry) return this.check(entry.definitions.response!, msg, respondsTo);
      return this.check("SuccessResponse", msg, "response");
    }
    const method = msg.method;
    if (typeof method !== "string") return invalid([issue("/method", "must be a string", "type")]);
    const entry = this.method(method, sender);
    if (!entry) {
      return invalid([issue("/method", `unknown ${sender === "client" ? "client" : "server"} method ${JSON.stringify(method)}`)], method);
    }
    const definition = entry.definitions.request ?? entry.definitions.notification!;
    const result = this.check(definition, msg, method);
    if (result.ok || entry.kind !== "notification" || method !== "session/event") return result;
    // A bad event: report against the event's own definition rather than the whole union.
    const event = isObject(msg.params) ? msg.params.event : undefined;
    if (isObject(event) && typeof event.type === "string") {
      const e = this.event(event.type);
      if (!e) return invalid([issue("/params/event/type", `unknown event type ${JSON.stringify(event.type)}`)], method);
      const detailed = this.check(e.definitions.event!, event, `${method} ${event.type}`, "/params/event");
      if (!detailed.ok) return detailed;
    }
    return result;
  }
}

const directionOf = (sender: Sender): IndexEntry["direction"] => (sender === "client" ? "client-to-server" : "server-to-client");

function describeSubject(msg: Record<string, unknown>): string | undefined {
  if (typeof msg.method === "string") return msg.method;
  if (typeof msg.type === "string") return msg.type;
  return undefined;
}

/**
 * How the one ajv instance is set up (benchmarks compile with the same). All errors, with their
 * schemas: explain() needs every branch of a failed union to tell the branch that matched from
 * those rejected by their discriminator.
 */
export const AJV_OPTIONS = { strict: true, allErrors: true, verbose: true, allowUnionTypes: true } as const;

/** Every bundle listed in schema/index.json, sharing the one ajv instance of the process. */
export class ProtocolValidators {
  private static instance: ProtocolValidators | undefined;
  readonly index: SchemaIndex;
  private readonly bundles = new Map<string, BundleValidator>();

  constructor() {
    this.index = readSchemaFile<SchemaIndex>("index.json");
    const schemas = this.index.bundles.map((b) => definitionsOnly(readSchemaFile<{ $id: string }>(b.schema)));
    const ajv = new Ajv2019(AJV_OPTIONS);
    for (const schema of schemas) ajv.addSchema(schema);
    this.index.bundles.forEach((b, i) => {
      const entries = this.index.entries.filter((e) => e.dialect === b.dialect && e.versions.includes(b.version));
      this.bundles.set(key(b.dialect, b.version), new BundleValidator(ajv, b.dialect, b.version, schemas[i]!.$id, entries));
    });
  }

  /** The process-wide validators (schemas are read and compiled once). */
  static shared(): ProtocolValidators {
    return (ProtocolValidators.instance ??= new ProtocolValidators());
  }

  get(dialect: Dialect, version?: number | string): BundleValidator {
    const v = version ?? this.currentVersion(dialect);
    const bundle = this.bundles.get(key(dialect, v));
    if (!bundle) throw new Error(`no ${dialect} schema for version ${String(v)}`);
    return bundle;
  }

  versions(dialect: Dialect): Array<number | string> {
    return this.index.bundles.filter((b) => b.dialect === dialect).map((b) => b.version);
  }

  currentVersion(dialect: Dialect): number | string {
    return this.index.bundles.find((b) => b.dialect === dialect && b.current)!.version;
  }
}

const key = (dialect: string, version: number | string) => `${dialect}@${version}`;

/**
 * A bundle without its root union. ajv compiles a schema's root the first time anything inside it
 * is referenced, and the root accepts every message of both directions, i.e. references every
 * definition: keeping it made the first check of any message compile the whole bundle (about half
 * a second of start-up). Messages are only ever checked against named definitions, each compiled
 * on first use.
 */
function definitionsOnly(schema: { $id: string }): { $schema?: string; $id: string; $defs?: object } {
  const { $schema, $id, $defs } = schema as { $schema?: string; $id: string; $defs?: object };
  return { ...($schema === undefined ? {} : { $schema }), $id, $defs };
}
