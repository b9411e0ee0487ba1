/**
 * Optional peer dependencies: packages that only one subpath needs (the MCP SDK for `phi-rx/mcp`,
 * swagger-parser for `phi-rx/openapi`, the @smithy / @aws-crypto packages for Bedrock). They are not
 * installed with phi-rx; the code that needs one imports it on first use through
 * {@link loadOptionalPeer}, which turns "module not found" into an error that says what to install.
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

/** Node reports `ERR_MODULE_NOT_FOUND` (ESM) or `MODULE_NOT_FOUND` (CJS), naming the package it looked for. */
function isMissingPackage(error: unknown, packageName: string): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  const notFound = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || /Cannot find (package|module)/.test(error.message);
  return notFound && (error.message.includes(`'${packageName}'`) || error.message.includes(`'${packageName}/`) || error.message.includes(`"${packageName}`));
}
