/**
 * Optional peer dependencies: packages that only one subpath needs (the MCP SDK for `phi-rx/mcp`,
 * swagger-parser for `phi-rx/openapi`, the @smithy / @aws-crypto packages for Bedrock). They are not
 * installed with phi-rx; the code that needs one imports it on first use through
 * {@link loadOptionalPeer} or {@link importOptionalPeer}, which turn "module not found" into an
 * error that says what to install.
 */

/** An optional peer dependency is not installed. The message names the package and the npm command. */
export class MissingPeerDependencyError extends Error {
  override readonly name = 'MissingPeerDependencyError';
  constructor(
    /** The npm package to install, e.g. `@modelcontextprotocol/sdk`. */
    readonly packageName: string,
    /** What needed it, e.g. `phi-rx/mcp`. */
    readonly feature: string,
    options?: { cause?: unknown },
  ) {
    super(`${feature} needs the package ${packageName}, which is not installed. Install it with: npm install ${packageName}`, options);
  }
}

/**
 * Runs `load` (a dynamic `import()`); if it fails because `packageName` cannot be found, rejects
 * with a {@link MissingPeerDependencyError}. Any other failure (a syntax error inside the
 * package, a different missing module) rejects unchanged.
 *
 * @example
 * const { Client } = await loadOptionalPeer('@modelcontextprotocol/sdk', 'phi-rx/mcp', () => import('@modelcontextprotocol/sdk/client/index.js'));
 */
export async function loadOptionalPeer<T>(packageName: string, feature: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissingPackage(error, packageName)) throw new MissingPeerDependencyError(packageName, feature, { cause: error });
    throw error;
  }
}

/**
 * Imports the optional peer `specifier` on first use, by a name held in a variable: a bundler
 * (esbuild, Vite/Rollup, webpack) does not resolve it, so an app that bundles phi-rx without the
 * peer installed still builds, and a user who never calls the feature never carries the package.
 * Use it for a peer reachable from a browser-safe entry (`phi-rx`, `phi-rx/providers`); the
 * specifier must be a package the user installs next to phi-rx. Missing, it rejects with a
 * {@link MissingPeerDependencyError} as {@link loadOptionalPeer} does.
 *
 * @example
 * const { SignatureV4 } = await importOptionalPeer<typeof import('@smithy/signature-v4')>('@smithy/signature-v4', 'Bedrock request signing');
 */
export function importOptionalPeer<T>(specifier: string, feature: string): Promise<T> {
  const packageName = packageOf(specifier);
  return loadOptionalPeer(packageName, feature, () => import(/* webpackIgnore: true */ /* @vite-ignore */ specifier) as Promise<T>);
}

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/**
 * Node reports `ERR_MODULE_NOT_FOUND` (ESM) or `MODULE_NOT_FOUND` (CJS), naming the package it
 * looked for; a browser, which has no package to look in, reports a bare specifier it cannot map
 * (Chromium: "Failed to resolve module specifier", Firefox: "was a bare specifier", Safari: "does
 * not resolve to a valid URL").
 */
function isMissingPackage(error: unknown, packageName: string): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  const notFound = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || /Cannot find (package|module)|Failed to resolve module specifier|was a bare specifier|does not resolve to a valid URL/.test(error.message);
  return notFound && (error.message.includes(`'${packageName}'`) || error.message.includes(`'${packageName}/`) || error.message.includes(`"${packageName}`) || error.message.includes(`“${packageName}`));
}
