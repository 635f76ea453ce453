import type { Dialect, Sender } from "../registry/model.js";
import type { ValidationIssue } from "./issues.js";
import { ProtocolValidators, type BundleValidator, type ValidationResult } from "./validator.js";

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
}

export interface LineVerdict {
  ok: boolean;
  dialect?: Dialect;
  /** Method or message type, when known. */
  subject?: string;
  issues: ValidationIssue[];
}

interface OpenRequest {
  method: string;
  /** The same bare request, also open as sent the other way (see checkEitherDirection); answered once, both go. */
  twin?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export class TranscriptChecker {
  private readonly bundles: Record<Dialect, BundleValidator>;
  /** Open requests by dialect, sender and id. */
  private readonly open = new Map<string, OpenRequest>();

  constructor(
    private readonly options: TranscriptOptions = {},
    validators = ProtocolValidators.shared(),
  ) {
    this.bundles = { tau: validators.get("tau", options.tauVersion), ask: validators.get("ask"), codex: validators.get("codex"), acp: validators.get("acp") };
  }

  /** Checks one line of text. Blank lines are skipped by the caller. */
  line(text: string): LineVerdict {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return { ok: false, issues: [{ pointer: "", message: `not valid JSON: ${(err as Error).message}`, keyword: "json" }] };
    }
    let sender: Sender | undefined;
    let message = value;
    if (isObject(value) && "message" in value && (value.direction === "client" || value.direction === "server")) {
      sender = value.direction;
      message = value.message;
    } else if (isObject(value) && "direction" in value && "message" in value) {
      return { ok: false, issues: [{ pointer: "/direction", message: 'must be "client" or "server"', keyword: "enum" }] };
    }
    const dialect = this.options.dialect ?? this.detectJsonRpcDialect(detectDialect(message), message);
    const bundle = this.bundles[dialect];
    const verdict = sender ? this.check(bundle, sender, message) : this.checkEitherDirection(bundle, message);
    return { ...verdict, dialect };
  }

  /**
   * JSON-RPC lines are Ask unless they belong to Codex: a method only Codex has, or a response
   * to an open Codex request.
   */
  private detectJsonRpcDialect(detected: Dialect, message: unknown): Dialect {
    if (detected !== "ask" || !isObject(message)) return detected;
    if (typeof message.method === "string") return !this.bundles.ask.method(message.method) && this.bundles.codex.method(message.method) ? "codex" : "ask";
    const openIn = (bundle: BundleValidator) => (["client", "server"] as const).some((sender) => this.open.has(this.key(bundle, sender, message.id)));
    return !openIn(this.bundles.ask) && openIn(this.bundles.codex) ? "codex" : "ask";
  }

  private checkEitherDirection(bundle: BundleValidator, message: unknown): LineVerdict {
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
    const asClient = this.key(bundle, "client", message.id);
    const asServer = this.key(bundle, "server", message.id);
    const open = this.open.get(asClient);
    if (!open || this.open.has(asServer) || !bundle.message("server", message).ok) return;
    open.twin = asServer;
    this.open.set(asServer, { method: message.method, twin: asClient });
  }

  /** The closer match for a message that fits neither direction, read from its discriminator. */
  private likelySender(bundle: BundleValidator, message: unknown): Sender {
    if (!isObject(message)) return "client";
    if (bundle.dialect === "tau") return message.type === "request" ? "client" : "server";
    if (typeof message.method === "string") return bundle.method(message.method, "client") || !bundle.method(message.method, "server") ? "client" : "server";
    // A response travels opposite to its request; answers to reverse requests come from clients.
    return this.open.has(this.key(bundle, "server", message.id)) ? "client" : "server";
  }

  /** Validation without touching the correlation table (used to pick a direction). */
  private probe(bundle: BundleValidator, sender: Sender, message: unknown): ValidationResult {
    const responseTo = isResponse(bundle, message) ? this.open.get(this.key(bundle, other(sender), (message as { id: unknown }).id)) : undefined;
    if (isResponse(bundle, message) && !responseTo && !isNullId(message)) {
      return { ok: false, issues: [{ pointer: "/id", message: "no open request", keyword: "correlation" }] };
    }
    return bundle.message(sender, message, responseTo?.method);
  }

  /** `validated`: the result of validating `message` as sent by `sender` (same request method), when already known. */
  private check(bundle: BundleValidator, sender: Sender, message: unknown, validated?: ValidationResult): LineVerdict {
    if (isResponse(bundle, message)) {
      const id = (message as { id: unknown }).id;
      if (isNullId(message)) return toVerdict(validated ?? bundle.message(sender, message));
      const k = this.key(bundle, other(sender), id);
      const request = this.open.get(k);
      if (!request) {
        const result = bundle.message(sender, message);
        const correlation = { pointer: "/id", message: `no open request with id ${JSON.stringify(id)} earlier in the transcript`, keyword: "correlation" };
        return { ok: false, subject: result.subject, issues: [correlation, ...result.issues] };
      }
      this.open.delete(k);
      if (request.twin) this.open.delete(request.twin);
      return toVerdict(validated ?? bundle.message(sender, message, request.method));
    }
    const result = validated ?? bundle.message(sender, message);
    const verdict = toVerdict(result);
    // Record requests that expect a response (those with an id), valid or not, so their
    // responses are still matched; a repeated open id is itself an error.
    if (isObject(message) && typeof message.method === "string" && "id" in message && message.id !== null && isRequest(bundle, message)) {
      const k = this.key(bundle, sender, message.id);
      if (this.open.has(k)) {
        return {
          ok: false,
          subject: verdict.subject,
          issues: [{ pointer: "/id", message: `duplicate id ${JSON.stringify(message.id)}: a request with this id is still open`, keyword: "correlation" }, ...verdict.issues],
        };
      }
      if (bundle.method(message.method, sender)) this.open.set(k, { method: message.method });
    }
    return verdict;
  }

  private key(bundle: BundleValidator, sender: Sender, id: unknown): string {
    return `${bundle.dialect}\u0000${sender}\u0000${JSON.stringify(id)}`;
  }
}

/**
 * Tau messages carry `version` and `type`; everything else is taken as JSON-RPC (Ask, unless the
 * transcript checker recognises Codex). ACP shares method names with Ask (initialize,
 * session/list, …), so it is checked only when asked for.
 */
export function detectDialect(message: unknown): Dialect {
  return isObject(message) && "version" in message && "type" in message ? "tau" : "ask";
}

function isResponse(bundle: BundleValidator, message: unknown): boolean {
  if (!isObject(message)) return false;
  if (bundle.dialect === "tau") return message.type === "response";
  return !("method" in message) && ("result" in message || "error" in message) && "id" in message;
}

function isRequest(bundle: BundleValidator, message: Record<string, unknown>): boolean {
  return bundle.dialect === "tau" ? message.type === "request" : true;
}

const isNullId = (message: unknown) => isObject(message) && message.id === null;
const other = (sender: Sender): Sender => (sender === "client" ? "server" : "client");

function toVerdict(result: ValidationResult): LineVerdict {
  return { ok: result.ok, subject: result.subject, issues: result.issues };
}
