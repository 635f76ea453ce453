// Types of viewer.js for the TypeScript tests (the page loads the .js as it is).
export function viewerText(viewer: { operator: boolean; tenant?: string }): string;
