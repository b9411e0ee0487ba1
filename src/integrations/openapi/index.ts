/**
 * OpenAPI operations as phi-rx tools, through @apidevtools/swagger-parser (`phi-rx/openapi`), an optional
 * peer dependency (`npm install @apidevtools/swagger-parser`), loaded on first use.
 *
 * @example
 * import { openApiToolsFromUrl, OpenApiAuth, OperationFilter } from 'phi-rx/openapi';
 * const { tools, warnings } = await openApiToolsFromUrl(
 *   'https://api.example.com/openapi.yaml',
 *   { auth: OpenApiAuth.bearer(process.env.API_TOKEN!), namePrefix: 'example' },
 *   OperationFilter.byTag('pets'),
 * );
 */
export { openApiToolsFromFile, openApiToolsFromSpec, openApiToolsFromUrl } from './load.js';
export type { OpenApiTools } from './load.js';
export {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_OPENAPI_TIMEOUT_MS,
  OpenApiAuth,
  OpenApiSettings,
  OperationFilter,
} from './config.js';
export type { OpenApiConfig, OpenApiLookup } from './config.js';
export type { OpenApiCallDetails } from './http-call.js';
export { OpenApiError } from './errors.js';
export { MissingPeerDependencyError } from '../../util/optional-peer.js';
export { truncateUtf8 } from './truncate.js';
/** The name the model sees for an operation: `{prefix}__{operationId}`, sanitized (see `safeToolName`). */
export { safeToolName as operationToolName } from '../../tools/tool-name.js';
