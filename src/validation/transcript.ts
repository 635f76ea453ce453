import type { Dialect, Sender } from "../registry/index.js";
import type { ValidationIssue } from "./issues.js";
import { ProtocolValidators, type BundleValidator, type ValidationResult } from "./validator.js";
import { JSON_BOUNDS, JsonBoundsError, parseBoundedJson, type JsonBounds } from "../shared/json-bounds.js";
import { isObject } from "../shared/unknown-values.js";

/**
 * Checks a recorded transcript one line at a time: each line is a bare message or
 * `{"direction":"client"|"server","message":{…}}`. Responses are checked against the result
 * schema of the request with the same id earlier in the transcript (reverse requests included).
 * Memory is bounded by the number of requests still waiting for a response, not by the file.
 */

export interface TranscriptOptions {
  /** Force a dialect instead of detecting it per line. */
  dialect?: Dialect;
  /** Tau protocol version to check against (default: current). */
  tauVersion?: number;
  /** The shape a line may have to be parsed at all (default: the gateway's, JSON_BOUNDS). */
  jsonBounds?: JsonBounds;
}

export interface LineVerdict {
  ok: boolean;
  dialect?: Dialect;
  /** Method or message type, when known. */
  subject?: string;
  issues: ValidationIssue[];
}

interface OpenRequest {
  /**
   * The request's method; its answer is checked against that method's result when the dialect
   * defines one, else (unknown method, notification, no method) by the envelope rules alone.
   */
  method: string | undefined;
  /** The same bare request is also open as sent the other way (see openBothWays); answered once, both go. */
  twin?: boolean;
}

/** A probe's answer for a response that answers no open request (its issues are never shown). */
const NO_OPEN_REQUEST: ValidationResult = Object.freeze({ ok: false, issues: [] });

export class TranscriptChecker {
  private readonly bundles: Record<Dialect, BundleValidator>;
  /** Open requests by dialect, sender and id (see idKey). */
  private readonly open = new Map<Dialect, Record<Sender, Map<unknown, OpenRequest>>>();

  constructor(
    private readonly options: TranscriptOptions = {},
    validators = ProtocolValidators.shared(),
  ) {
    // Every dialect's current bundle; Tau's at the version asked for.
    this.bundles = Object.fromEntries(validators.dialects.map((dialect) => [dialect, validators.get(dialect, dialect === "tau" ? options.tauVersion : undefined)])) as Record<Dialect, BundleValidator>;
  }

  /** The bounds a line's shape must keep to be parsed. */
  get jsonBounds(): JsonBounds {
    return this.options.jsonBounds ?? JSON_BOUNDS;
  }

  /** Checks one line of text. Blank lines are skipped by the caller. */
  line(text: string): LineVerdict {
    let value: unknown;
    try {
      value = parseBoundedJson(text, this.jsonBounds);
    } catch (err) {
      if (err instanceof JsonBoundsError) return { ok: false, issues: [{ pointer: "", message: `not checked: ${err.message}`, keyword: "json" }] };
      return { ok: false, issues: [{ pointer: "", message: `not valid JSON: ${(err as Error).message}`, keyword: "json" }] };
    }
    return this.parsedLine(value);
  }

  /** Checks one line already parsed as JSON (for callers that had to parse it to read it). */
  parsedLine(value: unknown): LineVerdict {
    let sender: Sender | undefined;
    let message = value;
    if (isObject(value) && "message" in value) {
      if (value.direction === "client" || value.direction === "server") {
        sender = value.direction;
        message = value.message;
      } else if ("direction" in value) {
        return { ok: false, issues: [{ pointer: "/direction", message: 'must be "client" or "server"', keyword: "enum" }] };
      }
    }
    return this.message(sender, message);
  }

  /**
   * Checks one message already parsed, as `line` checks the message of a recorded line: sent by
   * `sender`, or (undefined) by whichever side it fits.
   */
  message(sender: Sender | undefined, message: unknown): LineVerdict {
    const dialect = this.options.dialect ?? this.detectJsonRpcDialect(detectDialect(message), message);
    const bundle = this.bundles[dialect];
    const verdict = sender ? this.check(bundle, sender, message) : this.checkEitherDirection(bundle, message);
    return { ok: verdict.ok, subject: verdict.subject, issues: verdict.issues, dialect };
  }

  /**
   * JSON-RPC lines are Ask unless they belong to Codex: a method only Codex has, or a response
   * to an open Codex request.
   */
  private detectJsonRpcDialect(detected: Dialect, message: unknown): Dialect {
    if (detected !== "ask" || !isObject(message)) return detected;
    if (typeof message.method === "string") return !this.bundles.ask.method(message.method) && this.bundles.codex.method(message.method) ? "codex" : "ask";
    const key = idKey(message.id);
    const openIn = (bundle: BundleValidator) => this.requests(bundle, "client").has(key) || this.requests(bundle, "server").has(key);
    return !openIn(this.bundles.ask) && openIn(this.bundles.codex) ? "codex" : "ask";
  }

  private checkEitherDirection(bundle: BundleValidator, message: unknown): ValidationResult {
    for (const sender of ["client", "server"] as const) {
      const probed = this.probe(bundle, sender, message);
      // The probe already validated the message as `check` would: pass the result on, not the work.
      if (!probed.ok) continue;
      const verdict = this.check(bundle, sender, message, probed);
      if (sender === "client") this.openBothWays(bundle, message);
      return verdict;
    }
    return this.check(bundle, this.likelySender(bundle, message), message);
  }

  /**
   * A bare request whose method both sides send (Ask's interaction/requestPermission: a client's
   * query and the server's reverse request) and which fits both is open both ways: its answer,
   * from whichever side, is checked against the request it fits.
   */
  private openBothWays(bundle: BundleValidator, message: unknown): void {
    if (!isObject(message) || typeof message.method !== "string" || !("id" in message) || message.id === null) return;
    if (!bundle.method(message.method, "client") || !bundle.method(message.method, "server")) return;
    const key = idKey(message.id);
    const open = this.requests(bundle, "client").get(key);
    const asServer = this.requests(bundle, "server");
    if (!open || asServer.has(key) || !bundle.verdict("server", message).ok) return;
    open.twin = true;
    asServer.set(key, { method: message.method, twin: true });
  }

  /** The closer match for a message that fits neither direction, read from its discriminator. */
  private likelySender(bundle: BundleValidator, message: unknown): Sender {
    if (!isObject(message)) return "client";
    if (bundle.dialect === "tau") return message.type === "request" ? "client" : "server";
    if (typeof message.method === "string") return bundle.method(message.method, "client") || !bundle.method(message.method, "server") ? "client" : "server";
    // A response travels opposite to its request; answers to reverse requests come from clients.
    return this.requests(bundle, "server").has(idKey(message.id)) ? "client" : "server";
  }

  /** The verdict alone, without touching the correlation table (used to pick a direction); `check` explains a failure. */
  private probe(bundle: BundleValidator, sender: Sender, message: unknown): ValidationResult {
    if (!isResponse(bundle, message) || isNullId(message)) return bundle.verdict(sender, message);
    const responseTo = this.requests(bundle, other(sender)).get(idKey(message.id));
    return responseTo ? bundle.verdict(sender, message, responseTo.method) : NO_OPEN_REQUEST;
  }

  /** `validated`: the result of validating `message` as sent by `sender` (same request method), when already known. */
  private check(bundle: BundleValidator, sender: Sender, message: unknown, validated?: ValidationResult): ValidationResult {
    if (isResponse(bundle, message)) {
      const id = message.id;
      if (isNullId(message)) return validated ?? bundle.message(sender, message);
      const requests = this.requests(bundle, other(sender));
      const key = idKey(id);
      const request = requests.get(key);
      if (!request) {
        const result = bundle.message(sender, message);
        const correlation = { pointer: "/id", message: `no open request with id ${JSON.stringify(id)} earlier in the transcript`, keyword: "correlation" };
        return { ok: false, subject: result.subject, issues: [correlation, ...result.issues] };
      }
      requests.delete(key);
      if (request.twin) this.requests(bundle, sender).delete(key);
      return validated ?? bundle.message(sender, message, request.method);
    }
    const result = validated ?? bundle.message(sender, message);
    // Record every request that expects an answer (it has an id), whatever is wrong with it (an
    // unknown method, a method that is not a string, a notification sent with an id): the peer
    // answers it, often with an error, and that answer must correlate. A repeated open id is
    // itself an error.
    if (expectsAnswer(bundle, message)) {
      const requests = this.requests(bundle, sender);
      const key = idKey(message.id);
      if (requests.has(key)) {
        return {
          ok: false,
          subject: result.subject,
          issues: [{ pointer: "/id", message: `duplicate id ${JSON.stringify(message.id)}: a request with this id is still open`, keyword: "correlation" }, ...result.issues],
        };
      }
      requests.set(key, { method: typeof message.method === "string" ? message.method : undefined });
    }
    return result;
  }

  /** The requests `sender` has open in the bundle's dialect. */
  private requests(bundle: BundleValidator, sender: Sender): Map<unknown, OpenRequest> {
    let bySender = this.open.get(bundle.dialect);
    if (!bySender) this.open.set(bundle.dialect, (bySender = { client: new Map(), server: new Map() }));
    return bySender[sender];
  }
}

/**
 * The key of a request id: a string or number as it is (a Map tells "1" from 1 as JSON does),
 * anything else (not a valid id, but still correlated) by its JSON text, marked so that it never
 * equals a string id.
 */
function idKey(id: unknown): unknown {
  return typeof id === "string" || typeof id === "number" ? id : `\u0000${JSON.stringify(id)}`;
}

/**
 * Tau messages carry `version` and `type`; everything else is taken as JSON-RPC (Ask, unless the
 * transcript checker recognises Codex). ACP shares method names with Ask (initialize,
 * session/list, …), so it is checked only when asked for.
 */
export function detectDialect(message: unknown): Dialect {
  return isObject(message) && "version" in message && "type" in message ? "tau" : "ask";
}

function isResponse(bundle: BundleValidator, message: unknown): message is Record<string, unknown> {
  if (!isObject(message)) return false;
  if (bundle.dialect === "tau") return message.type === "response";
  return !("method" in message) && ("result" in message || "error" in message) && "id" in message;
}

/**
 * A message that is not a response and carries a non-null id: a request, valid or not, that the
 * peer answers. Tau requests say so in `type`; a JSON-RPC message is one unless it has a result or
 * an error and no method.
 */
function expectsAnswer(bundle: BundleValidator, message: unknown): message is Record<string, unknown> {
  if (!isObject(message) || !("id" in message) || message.id === null || message.id === undefined) return false;
  return bundle.dialect === "tau" ? message.type === "request" : !isResponse(bundle, message);
}

const isNullId = (message: Record<string, unknown>) => message.id === null;
const other = (sender: Sender): Sender => (sender === "client" ? "server" : "client");
