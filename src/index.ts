/** Public entry point of the tau-gateway package. */
export { acpRegistry, askRegistry, registries, tauRegistry, type Dialect } from "./registry/index.js";
export type * from "./registry/model.js";
export { explain, formatIssue, type ValidationIssue } from "./validation/issues.js";
export { TranscriptChecker, detectDialect, type LineVerdict, type TranscriptOptions } from "./validation/transcript.js";
export { BundleValidator, ProtocolValidators, type ValidationResult } from "./validation/validator.js";
export { TauCodec, TAU_VERSION, type ParsedRequest } from "./tau/codec.js";
/** Tau's error object, as error responses carry it. */
export type { ErrorObject as TauProtocolError } from "../generated/tau-v18.js";
