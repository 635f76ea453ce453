/**
 * What the users of one session chose "always" for the rest of it. "Always allow" is a grant the
 * bridge core keeps (it runs the tool without asking anyone); "always reject" is kept here, and
 * the ACP connections of the session reject the tool's calls without asking.
 */
export class SessionChoices {
  private readonly rejected = new Set<string>();

  rejectAlways(toolName: string): void {
    this.rejected.add(toolName);
  }

  rejectsAlways(toolName: string): boolean {
    return this.rejected.has(toolName);
  }
}
