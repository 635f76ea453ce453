/** A mistake in how the benchmark was asked to run (an unknown ref, a bad option value): reported as its message alone, not a stack. */
export class UsageError extends Error {
  override name = "UsageError";
}
