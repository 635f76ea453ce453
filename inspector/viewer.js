// Who the inspector page is showing things to, with no DOM: an operator sees every tenant's
// traffic; any other token its own tenant's, read-only.

/**
 * The header's words for the viewer `/inspector/api/viewer` describes.
 * @param {{ operator: boolean, tenant?: string }} viewer
 */
export function viewerText(viewer) {
  if (!viewer.operator) return `tenant ${viewer.tenant ?? "?"}: its own connections, read-only`;
  return viewer.tenant === undefined ? "every tenant (loopback, no tokens)" : `operator (${viewer.tenant}): every tenant`;
}
