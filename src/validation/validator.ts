import type { ErrorObject } from "ajv";
import type { Ajv2019, ValidateFunction } from "ajv/dist/2019.js";
import { ajv2019 } from "../shared/lazy-ajv.js";
import type { Dialect, Sender } from "../registry/index.js";
import type { IndexBundle, IndexEntry, SchemaIndex } from "../registry/schema-index.js";
import { explain, relevantErrors, type ValidationIssue } from "./issues.js";
import { loadFastChecks, type FastCheck } from "./precompiled.js";
import { readSchemaFile } from "./schema-files.js";
import { isObject } from "../shared/unknown-values.js";

/**
 * The validators of the process and everything validated with them, from the committed schema/
 * files (the same ones client CI uses) and what `npm run generate` precompiled from them.
 * Messages are dispatched on their discriminator (`type` for Tau, `method` or response shape for
 * JSON-RPC) to the exact definition, so errors point at the real problem instead of listing every
 * union branch.
 *
 * Two tiers, both compiled from the same schema files: every value is checked by the fast tier
 * (stops at the first error, keeps no schema in it, picks a union's branch by its tag; precompiled
 * at generate time, see src/codegen/fast-validators.ts), and only a value it rejects is checked
 * again by the detailed tier, compiled at run time, definition by definition, whose every error,
 * with its schema, explain() turns into the readable issues reported. A valid message, nearly
 * every one, costs one fast check; an invalid one gets the same issues as if only the detailed
 * tier existed.
 */

export interface ValidationResult {
  ok: boolean;
  /** The method or message type the message was checked as, when known. */
  subject?: string;
  /** The definition it was checked against. */
  definition?: string;
  issues: ValidationIssue[];
  /**
   * ajv's own errors behind `issues` (see relevantErrors), for callers that must word a failure
   * in a dialect's words. Not enumerable: results are printed and sent as they were.
   */
  readonly errors?: readonly ErrorObject[];
}

const valid = (subject?: string, definition?: string): ValidationResult => ({ ok: true, subject, definition, issues: [] });
const invalid = (issues: ValidationIssue[], subject?: string, definition?: string): ValidationResult => ({
  ok: false,
  subject,
  definition,
  issues,
});
const issue = (pointer: string, message: string, keyword = "protocol"): ValidationIssue => ({ pointer, message, keyword });

/**
 * The ajv instance of the detailed tier (see the top of this file), made when the first rejected
 * value is explained: a process that sees only valid messages never loads ajv's compiler (a
 * fifth of `validate`'s start-up), reads a bundle's schema file nor compiles a detailed check. A
 * bundle's schema file is read and added to it when a value of that bundle is first explained.
 */
export class DetailedTier {
  private ajv: Ajv2019 | undefined;

  /** Reads a bundle's schema file, adds it and returns its `$id`. */
  load(file: string): string {
    const schema = definitionsOnly(readSchemaFile<{ $id: string }>(file));
    (this.ajv ??= newDetailedAjv()).addSchema(schema);
    return schema.$id;
  }

  compile(schemaId: string, definition: string): ValidateFunction {
    const fn = this.ajv?.getSchema(`${schemaId}#/$defs/${definition}`);
    if (!fn) throw new Error(`${schemaId}: no definition ${definition}`);
    return fn;
  }
}

/** Loaded on first use, synchronously (a check is synchronous): see DetailedTier. */
function newDetailedAjv(): Ajv2019 {
  const Ajv = ajv2019();
  return new Ajv({ ...AJV_OPTIONS, ...LOADING });
}

/** A validator for one bundle (dialect + version). */
export class BundleValidator {
  private fastChecks: ReadonlyMap<string, FastCheck> | undefined;
  private readonly detailedDefinitions = new Map<string, ValidateFunction>();
  private readonly serverMessages = new Map<string, IndexEntry>();
  /** Methods by wire name as each side sends them (a name may be a request and a reverse request). */
  private readonly methodsSentBy: Record<Sender, Map<string, IndexEntry>> = { client: new Map(), server: new Map() };
  /** Without a sender: the first entry the registry lists for a name (client requests come before reverse requests). */
  private readonly firstMethods = new Map<string, IndexEntry>();
  private readonly eventTypes = new Map<string, IndexEntry>();
  private loadedSchemaId: string | undefined;

  readonly dialect: Dialect;
  readonly version: number | string;

  constructor(
    private readonly detailedTier: DetailedTier,
    private readonly files: Pick<IndexBundle, "dialect" | "version" | "schema" | "validators">,
    entries: IndexEntry[],
  ) {
    this.dialect = files.dialect;
    this.version = files.version;
    for (const e of entries) {
      if (e.kind === "event") this.eventTypes.set(e.name, e);
      else if (e.kind === "server-message") this.serverMessages.set(e.name, e);
      else {
        if (!this.firstMethods.has(e.name)) this.firstMethods.set(e.name, e);
        const sentBy = this.methodsSentBy[e.direction === "client-to-server" ? "client" : "server"];
        if (!sentBy.has(e.name)) sentBy.set(e.name, e);
      }
    }
  }

  /**
   * The registry entry of a method (request, reverse request or notification) in this version:
   * the one `sender` sends, or without a sender the first the registry lists (client requests come
   * before reverse requests).
   */
  method(name: string, sender?: Sender): IndexEntry | undefined {
    return sender ? this.methodsSentBy[sender].get(name) : this.firstMethods.get(name);
  }

  serverMessage(type: string): IndexEntry | undefined {
    return this.serverMessages.get(type);
  }

  event(type: string): IndexEntry | undefined {
    return this.eventTypes.get(type);
  }

  /** The `$id` of the bundle's schema, which is loaded into the detailed tier the first time it is asked for. */
  private get schemaId(): string {
    return (this.loadedSchemaId ??= this.detailedTier.load(this.files.schema));
  }

  /** The bundle's precompiled fast checks, loaded on first use (`serve` never loads Tau v13's). */
  private get fast(): ReadonlyMap<string, FastCheck> {
    return (this.fastChecks ??= loadFastChecks(this.files.validators));
  }

  hasDefinition(name: string): boolean {
    return this.fast.has(name);
  }

  /**
   * Validates `value` against a named definition of the bundle. `explainFailure` false: a rejected
   * value gets no issues (for callers that only need the verdict, e.g. to try a message both ways).
   */
  check(definition: string, value: unknown, subject?: string, pointerPrefix = "", explainFailure = true): ValidationResult {
    if (this.fastCheck(definition)(value)) return valid(subject, definition);
    if (!explainFailure) return invalid([], subject, definition);
    const detailed = this.detailedCheck(definition);
    // Both tiers compile the same schema, so they agree; were they ever not to, the detailed one, compiled exactly as generated, decides.
    if (detailed(value)) return valid(subject, definition);
    const issues = explain(detailed.errors).map((i) => ({ ...i, pointer: pointerPrefix + i.pointer }));
    return Object.defineProperty(invalid(issues, subject, definition), "errors", { value: relevantErrors(detailed.errors), enumerable: false });
  }

  private fastCheck(definition: string): FastCheck {
    const fn = this.fast.get(definition);
    if (!fn) throw new Error(`${this.files.validators}: no definition ${definition}`);
    return fn;
  }

  /** Each definition is compiled once, on first use. */
  private detailedCheck(definition: string): ValidateFunction {
    let fn = this.detailedDefinitions.get(definition);
    if (!fn) {
      fn = this.detailedTier.compile(this.schemaId, definition);
      this.detailedDefinitions.set(definition, fn);
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
    return this.dispatch(sender, message, respondsTo, true);
  }

  /** The verdict of `message()` without its issues: a rejected message costs one fast check, not a detailed one. */
  verdict(sender: Sender, message: unknown, respondsTo?: string): ValidationResult {
    return this.dispatch(sender, message, respondsTo, false);
  }

  private dispatch(sender: Sender, message: unknown, respondsTo: string | undefined, explainFailure: boolean): ValidationResult {
    if (!isObject(message)) return invalid([issue("", "message must be a JSON object", "type")]);
    return this.dialect === "tau" ? this.tauMessage(sender, message, respondsTo, explainFailure) : this.jsonRpcMessage(sender, message, respondsTo, explainFailure);
  }

  private tauMessage(sender: Sender, msg: Record<string, unknown>, respondsTo: string | undefined, explainFailure: boolean): ValidationResult {
    if (msg.version !== this.version) {
      return invalid([issue("/version", `must be ${this.version} (got ${JSON.stringify(msg.version)})`, "const")], describeSubject(msg));
    }
    if (sender === "client") {
      if (msg.type !== "request") return invalid([issue("/type", 'must be "request"', "const")], describeSubject(msg));
      // What passes its method's definition passes the envelope (each restates the envelope's
      // members and wants an object for params; validation-tiers.test.ts checks it): a valid
      // request costs one check, not two. Any other is checked as before, the envelope first.
      const known = typeof msg.method === "string" ? this.method(msg.method, "client") : undefined;
      if (known?.kind === "request" && this.fastCheck(known.definitions.request!)(msg)) return valid(msg.method as string, known.definitions.request);
      const envelope = this.check("RequestEnvelope", msg, undefined, "", explainFailure);
      if (!envelope.ok) return { ...envelope, subject: typeof msg.method === "string" ? msg.method : undefined };
      const method = msg.method as string;
      const entry = this.method(method, "client");
      if (!entry || entry.kind !== "request") return invalid([issue("/method", `unknown method ${JSON.stringify(method)}`)], method);
      return this.check(entry.definitions.request!, msg, method, "", explainFailure);
    }
    const type = msg.type;
    if (typeof type !== "string") return invalid([issue("/type", "must be a string", "type")]);
    if (type === "response") {
      if (msg.ok === false) return this.check("ErrorResponse", msg, respondsTo ?? "response", "", explainFailure);
      if (msg.ok !== true) return invalid([issue("/ok", "must be true or false", "type")], respondsTo ?? "response");
      const response = respondsTo ? this.method(respondsTo, "client")?.definitions.response : undefined;
      if (response) return this.check(response, msg, respondsTo, "", explainFailure);
      return this.check("SuccessResponse", msg, "response", "", explainFailure);
    }
    const entry = this.serverMessage(type);
    if (!entry) return invalid([issue("/type", `unknown server message type ${JSON.stringify(type)}`)], type);
    return this.check(entry.definitions.message!, msg, type, "", explainFailure);
  }

  /** A JSON-RPC dialect (Ask, Codex): requests and notifications by `method`, responses by the method of the request they answer. */
  private jsonRpcMessage(sender: Sender, msg: Record<string, unknown>, respondsTo: string | undefined, explainFailure: boolean): ValidationResult {
    if ("jsonrpc" in msg && msg.jsonrpc !== "2.0") return invalid([issue("/jsonrpc", 'must be "2.0" when present', "const")]);
    if (!("method" in msg)) {
      if ("error" in msg) return this.check("ErrorResponse", msg, respondsTo ?? "response", "", explainFailure);
      if (!("result" in msg)) return invalid([issue("", "must have a method (request) or a result or error (response)", "required")]);
      // A response travels opposite to the request it answers. An answer to what the dialect does
      // not define as a request (an unknown method, a notification sent with an id) can only be
      // judged as a response envelope.
      const response = respondsTo ? this.method(respondsTo, sender === "client" ? "server" : "client")?.definitions.response : undefined;
      if (response) return this.check(response, msg, respondsTo, "", explainFailure);
      return this.check("SuccessResponse", msg, "response", "", explainFailure);
    }
    const method = msg.method;
    if (typeof method !== "string") return invalid([issue("/method", "must be a string", "type")]);
    const entry = this.method(method, sender);
    if (!entry) {
      // A probe of the other direction (a bare server message tried as the client's) is told no
      // without the wording: its issues are never shown.
      if (!explainFailure) return invalid([], method);
      return invalid([issue("/method", `unknown ${sender === "client" ? "client" : "server"} method ${JSON.stringify(method)}`)], method);
    }
    const definition = entry.definitions.request ?? entry.definitions.notification!;
    const result = this.check(definition, msg, method, "", explainFailure);
    if (result.ok || !explainFailure || entry.kind !== "notification" || method !== "session/event") return result;
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

function describeSubject(msg: Record<string, unknown>): string | undefined {
  if (typeof msg.method === "string") return msg.method;
  if (typeof msg.type === "string") return msg.type;
  return undefined;
}

/**
 * How the detailed tier is set up (benchmarks compile with the same). All errors, with their
 * schemas: explain() needs every branch of a failed union to tell the branch that matched from
 * those rejected by their discriminator.
 */
export const AJV_OPTIONS = { strict: true, allErrors: true, verbose: true, allowUnionTypes: true } as const;

/**
 * The schema files are not checked against JSON Schema's meta-schema when loaded: compiling the
 * meta-schema and walking a bundle with it would be most of the cost of a first explanation, for
 * files that are generated, and checked against it (and compiled in strict mode) by the registry
 * tests.
 */
const LOADING = { validateSchema: false } as const;

/** Every bundle listed in schema/index.json, with the two tiers of the process. */
export class ProtocolValidators {
  private static instance: ProtocolValidators | undefined;
  readonly index: SchemaIndex;
  private readonly bundles = new Map<string, BundleValidator>();

  constructor() {
    this.index = readSchemaFile<SchemaIndex>("index.json");
    const detailed = new DetailedTier();
    this.index.bundles.forEach((b) => {
      const entries = this.index.entries.filter((e) => e.dialect === b.dialect && e.versions.includes(b.version));
      this.bundles.set(key(b.dialect, b.version), new BundleValidator(detailed, b, entries));
    });
  }

  /** The process-wide validators (each bundle's checks are loaded once). */
  static shared(): ProtocolValidators {
    return (ProtocolValidators.instance ??= new ProtocolValidators());
  }

  get(dialect: Dialect, version?: number | string): BundleValidator {
    const v = version ?? this.currentVersion(dialect);
    const bundle = this.bundles.get(key(dialect, v));
    if (!bundle) throw new Error(`no ${dialect} schema for version ${String(v)}`);
    return bundle;
  }

  /** Every dialect with a bundle, in the index's order. */
  get dialects(): Dialect[] {
    return [...new Set(this.index.bundles.map((b) => b.dialect))];
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
 * definition: keeping it would make the first explanation compile the whole bundle. Messages are
 * only ever checked against named definitions, each compiled on first use.
 */
function definitionsOnly(schema: { $id: string }): { $schema?: string; $id: string; $defs?: object } {
  const { $schema, $id, $defs } = schema as { $schema?: string; $id: string; $defs?: object };
  return { ...($schema === undefined ? {} : { $schema }), $id, $defs };
}
