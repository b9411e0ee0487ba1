import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type SwaggerParserType from '@apidevtools/swagger-parser';
import { catchError, defer, of } from 'rxjs';
import { parse as parseYaml } from 'yaml';
import { ToolError, errorMessage } from '../../types/errors.js';
import type { ArgsValidation, JsonSchema, Tool, ToolResult } from '../../types/tool.js';
import { OpenApiSettings } from './config.js';
import type { OpenApiConfig, OperationFilter } from './config.js';
import { OpenApiError } from './errors.js';
import { callOperation, prepareRequest } from './http-call.js';
import { listOperations } from './operations.js';
import { argumentsValidator } from './validate-args.js';
import type { SchemaDraft } from '@cfworker/json-schema';
import type { OpenApiDocument, OperationSpec } from './operations.js';
import { safeToolName, uniqueToolName } from '../../tools/tool-name.js';
import { loadOptionalPeer } from '../../util/optional-peer.js';
import { refResolver } from './ref-resolver.js';
import type { SpecOrigin } from './ref-resolver.js';
import { SpecFetchError, SpecFetcher } from './spec-fetch.js';

/** Providers reject longer tool descriptions (OpenAI: 1024 characters). */
const MAX_DESCRIPTION = 1024;

/** The tools made from one spec. */
export interface OpenApiTools {
  tools: Tool[];
  /** Operations left out and why (no operationId, unsupported body, renamed on collision...). */
  warnings: string[];
  /** Where the tools send their requests. */
  baseUrl: string;
  title: string | undefined;
  version: string | undefined;
  /** The settings the tools run with; prints with its secrets redacted. */
  settings: OpenApiSettings;
}

interface Source {
  /** For messages: a file path or URL, or "inline spec". */
  label: string;
  /** Base for relative `$ref`s and relative server URLs. */
  base?: string;
  httpBase?: URL;
  /** What its `$ref`s may read. */
  origin: SpecOrigin;
}

/**
 * Tools from an OpenAPI document held in memory: JSON or YAML text, or an already parsed object
 * (which is not modified). Its `$ref`s may fetch http(s) URLs (checked as for
 * {@link openApiToolsFromUrl}) but never read a file.
 *
 * @example
 * const { tools, warnings } = await openApiToolsFromSpec(yamlText, { auth: OpenApiAuth.bearer(token) }, OperationFilter.byTag('pets'));
 */
export async function openApiToolsFromSpec(spec: string | object, config?: OpenApiConfig, filter?: OperationFilter): Promise<OpenApiTools> {
  const settings = new OpenApiSettings(config);
  const source: Source = { label: 'inline spec', origin: { kind: 'inline' } };
  const doc = typeof spec === 'string' ? parseSpecText(spec, source.label) : structuredClone(spec);
  return withFetcher(settings, (fetcher) => buildTools(doc, source, settings, fetcher, filter));
}

/**
 * Tools from an OpenAPI file (JSON or YAML). Relative `$ref`s resolve against the file, and file
 * `$ref`s read only inside `config.baseDir` (default: the file's directory).
 *
 * @example
 * const { tools } = await openApiToolsFromFile('./petstore.yaml', { baseUrl: 'http://127.0.0.1:8080/v1' });
 */
export async function openApiToolsFromFile(file: string, config?: OpenApiConfig, filter?: OperationFilter): Promise<OpenApiTools> {
  const settings = new OpenApiSettings(config);
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch (error) {
    throw new OpenApiError(absolute, `Cannot read the OpenAPI spec file ${absolute}: ${errorMessage(error)}`, { cause: error });
  }
  const root = path.resolve(settings.baseDir ?? path.dirname(absolute));
  const source: Source = { label: absolute, base: pathToFileURL(absolute).href, origin: { kind: 'file', root } };
  return withFetcher(settings, (fetcher) => buildTools(parseSpecText(text, absolute), source, settings, fetcher, filter));
}

/**
 * Tools from an OpenAPI document fetched over HTTP (through undici, within `timeoutMs`). A
 * relative server URL in the spec resolves against this URL. The URL, every `$ref` and every
 * redirect is refused when its host resolves to a loopback or private address (unless
 * `allowPrivateRefs` or `trustedHosts` say otherwise), and no `$ref` reads a file.
 *
 * @example
 * const { tools } = await openApiToolsFromUrl('https://api.example.com/openapi.json', { namePrefix: 'example' });
 */
export async function openApiToolsFromUrl(url: string | URL, config?: OpenApiConfig, filter?: OperationFilter): Promise<OpenApiTools> {
  const settings = new OpenApiSettings(config);
  const specUrl = new URL(url);
  const label = settings.redact(specUrl.href);
  return withFetcher(settings, async (fetcher) => {
    let text: string;
    try {
      text = await fetcher.fetchText(specUrl, `the OpenAPI spec ${specUrl.href}`);
    } catch (error) {
      throw new OpenApiError(label, errorMessage(error), { cause: error });
    }
    const source: Source = { label, base: specUrl.href, httpBase: specUrl, origin: { kind: 'url' } };
    return buildTools(parseSpecText(text, label), source, settings, fetcher, filter);
  });
}

/** One fetcher per load, its connections closed when the load ends. */
async function withFetcher<T>(settings: OpenApiSettings, load: (fetcher: SpecFetcher) => Promise<T>): Promise<T> {
  const fetcher = new SpecFetcher(settings);
  try {
    return await load(fetcher);
  } finally {
    await fetcher.close();
  }
}

/** JSON when the text starts with `{` or `[`, YAML otherwise. */
function parseSpecText(text: string, label: string): object {
  const json = /^\s*[[{]/.test(text);
  let parsed: unknown;
  try {
    parsed = json ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new OpenApiError(label, `The OpenAPI spec ${label} is not valid ${json ? 'JSON' : 'YAML'}: ${errorMessage(error)}`, { cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new OpenApiError(label, `The OpenAPI spec ${label} is not an object`);
  }
  return parsed;
}

async function buildTools(
  raw: object,
  source: Source,
  settings: OpenApiSettings,
  fetcher: SpecFetcher,
  filter: OperationFilter = { kind: 'all' },
): Promise<OpenApiTools> {
  // swagger-parser rewrites relative server URLs of a fetched spec and loses the port doing so;
  // keep the servers as written and resolve them ourselves.
  const servers = structuredClone((raw as OpenApiDocument).servers);
  requirePaths(raw, source.label);
  // An optional peer dependency, imported on first use: its absence is its own clear error.
  const SwaggerParser = (await loadOptionalPeer('@apidevtools/swagger-parser', 'phi-rx/openapi', () => import('@apidevtools/swagger-parser'))).default;
  let doc: OpenApiDocument;
  // swagger-parser's own file and http resolvers are off: every $ref goes through refResolver.
  const resolver = refResolver(source.origin, fetcher);
  const options = { resolve: { file: false, http: false, phiRx: resolver } } as unknown as SwaggerParserType.Options;
  try {
    // validate() also dereferences, in place; the object is always our own copy.
    const api = raw as Exclude<Parameters<typeof SwaggerParserType.validate>[1], string>;
    doc = (source.base ? await SwaggerParser.validate(source.base, api, options) : await SwaggerParser.validate(api, options)) as OpenApiDocument;
  } catch (error) {
    const why = resolver.failure ?? error;
    throw new OpenApiError(source.label, `Invalid OpenAPI spec ${source.label}: ${errorMessage(why)}`, { cause: why });
  }
  if (servers) doc.servers = servers;

  const { operations, warnings } = listOperations(doc, filter);
  const baseUrl = operations.length > 0 ? resolveBaseUrl(doc, settings, source) : (tryBaseUrl(doc, settings, source) ?? '');
  if (operations.length > 0) await checkSpecServer(baseUrl, source, settings, fetcher);
  const taken = new Set<string>();
  const tools = operations.map((op) => {
    const wanted = safeToolName(op.operationId, settings.namePrefix);
    const name = uniqueToolName(wanted, taken);
    taken.add(name);
    if (name !== (settings.namePrefix ? `${settings.namePrefix}__${op.operationId}` : op.operationId)) {
      warnings.push(`${op.operationId} (${op.method} ${op.path}): tool named "${name}" (tool names allow 1-64 characters of [a-zA-Z0-9_-])`);
    }
    return operationTool(op, name, baseUrl, settings, schemaDraft(doc), source.label);
  });
  return { tools, warnings, baseUrl, title: doc.info?.title, version: doc.info?.version, settings };
}

/**
 * A spec fetched from a URL may not point its tools at an internal endpoint: its server (when
 * config.baseUrl does not replace it) is checked as its `$ref`s are, once, at load time.
 */
async function checkSpecServer(baseUrl: string, source: Source, settings: OpenApiSettings, fetcher: SpecFetcher): Promise<void> {
  if (source.origin.kind !== 'url' || settings.baseUrlOverride !== undefined) return;
  try {
    await fetcher.check(new URL(baseUrl), `the server ${baseUrl}`);
  } catch (error) {
    const why = error instanceof SpecFetchError ? error.reason : errorMessage(error);
    throw new OpenApiError(source.label, `The server ${settings.redact(baseUrl)} of the OpenAPI spec ${source.label} is ${why}; or set config.baseUrl`, { cause: error });
  }
}

/** Without `paths` there is nothing to make tools of (the parser's own message would be "[object Object] is not valid"). */
function requirePaths(raw: object, label: string): void {
  const { paths, openapi, swagger } = raw as OpenApiDocument;
  if (typeof openapi !== 'string' && typeof swagger !== 'string') {
    throw new OpenApiError(label, `Invalid OpenAPI spec ${label}: it has neither an "openapi" nor a "swagger" version field`);
  }
  if (typeof paths !== 'object' || paths === null || Array.isArray(paths)) {
    throw new OpenApiError(label, `Invalid OpenAPI spec ${label}: it has no "paths" object, so there are no operations to make tools of`);
  }
}

/** OpenAPI 3.1 schemas are JSON Schema 2020-12; 3.0 and Swagger 2.0 schemas are draft-04 dialects. */
function schemaDraft(doc: OpenApiDocument): SchemaDraft {
  return doc.openapi?.startsWith('3.1') ? '2020-12' : '4';
}

function tryBaseUrl(doc: OpenApiDocument, settings: OpenApiSettings, source: Source): string | undefined {
  try {
    return resolveBaseUrl(doc, settings, source);
  } catch {
    return undefined;
  }
}

/** config.baseUrl, else the spec's first server (variables at their defaults), without a trailing slash. */
function resolveBaseUrl(doc: OpenApiDocument, settings: OpenApiSettings, source: Source): string {
  const candidate = settings.baseUrlOverride ?? specServer(doc, source);
  if (candidate === undefined) {
    throw new OpenApiError(source.label, `The OpenAPI spec ${source.label} declares no server; set config.baseUrl`);
  }
  let absolute: URL;
  try {
    absolute = source.httpBase ? new URL(candidate, source.httpBase) : new URL(candidate);
  } catch {
    throw new OpenApiError(source.label, `The server URL "${candidate}" of ${source.label} is not absolute and there is no spec URL to resolve it against; set config.baseUrl`);
  }
  return absolute.href.replace(/\/+$/, '');
}

function specServer(doc: OpenApiDocument, source: Source): string | undefined {
  const server = doc.servers?.[0];
  if (server) return server.url.replace(/\{([^}]+)\}/g, (whole, name: string) => server.variables?.[name]?.default ?? whole);
  if (doc.swagger === undefined) return undefined;
  // Swagger 2.0: scheme + host + basePath; without a host, the host that served the spec.
  const basePath = doc.basePath ?? '';
  if (doc.host) return `${doc.schemes?.[0] ?? source.httpBase?.protocol.replace(':', '') ?? 'https'}://${doc.host}${basePath}`;
  return source.httpBase ? basePath || '/' : undefined;
}

function operationTool(op: OperationSpec, name: string, baseUrl: string, settings: OpenApiSettings, draft: SchemaDraft, label: string): Tool {
  const required = [
    ...op.params.filter((p) => p.required).map((p) => p.argKey),
    ...(op.body?.required ? [op.body.argKey] : []),
  ];
  const properties: Record<string, JsonSchema> = Object.fromEntries(op.params.map((p) => [p.argKey, p.schema]));
  if (op.body) properties[op.body.argKey] = op.body.schema;
  const parameters: JsonSchema = { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
  const where = `${op.operationId} (${op.method} ${op.path})`;
  let checkTypes: (args: unknown) => ArgsValidation<Record<string, unknown>>;
  try {
    checkTypes = argumentsValidator(parameters, draft, where);
  } catch (error) {
    throw new OpenApiError(label, `${errorMessage(error)} in ${label}`, { cause: error });
  }
  const validate = (args: unknown): ArgsValidation<Record<string, unknown>> => {
    const value = args ?? {};
    if (typeof value !== 'object' || Array.isArray(value)) return { ok: false, error: 'arguments must be a JSON object' };
    const missing = required.filter((key) => (value as Record<string, unknown>)[key] === undefined);
    if (missing.length > 0) return { ok: false, error: `missing required argument${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}` };
    return checkTypes(value);
  };

  return {
    name,
    label: op.summary ?? op.operationId,
    description: describe(op),
    parameters,
    validate,
    execute: (args, ctx) =>
      defer(() => {
        // Also when called directly, not through the loop's validate(): bad arguments never reach the API.
        const checked = validate(args);
        if (!checked.ok) throw ToolError.invalidArgs(`${name}: ${checked.error}`);
        return callOperation(prepareRequest(op, checked.value, baseUrl, settings), settings, ctx.signal, ctx.scheduler);
      }).pipe(
        catchError((error: unknown) => {
          // Invalid arguments, or a request that cannot be built (a dot-segment path parameter), are the model's to fix; cancellation is not.
          if (error instanceof ToolError && error.kind === 'invalidArgs') {
            return of<ToolResult>({ content: [{ type: 'text', text: settings.redact(error.message) }], isError: true });
          }
          throw error;
        }),
      ),
  };
}

function describe(op: OperationSpec): string {
  const parts = [op.deprecated ? 'Deprecated.' : '', op.summary ?? '', op.description ?? ''].map((p) => p.trim()).filter((p) => p.length > 0);
  const text = parts.length > 0 ? parts.join('\n\n') : `${op.method} ${op.path}`;
  return text.length <= MAX_DESCRIPTION ? text : `${text.slice(0, MAX_DESCRIPTION - 1)}…`;
}
