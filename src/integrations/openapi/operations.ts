import type { JsonSchema } from '../../types/tool.js';
import type { OperationFilter } from './config.js';
import { toModelSchema } from './schema.js';

/** The parts of an OpenAPI 3.x / Swagger 2.0 document (already dereferenced) that tools are made of. */
export interface OpenApiDocument {
  openapi?: string;
  swagger?: string;
  info?: { title?: string; version?: string };
  servers?: { url: string; variables?: Record<string, { default?: string }> }[];
  host?: string;
  basePath?: string;
  schemes?: string[];
  consumes?: string[];
  paths?: Record<string, PathItem | undefined>;
}

type PathItem = { parameters?: Parameter[] } & { [method in HttpMethod]?: Operation };

interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  deprecated?: boolean;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; description?: string; content?: Record<string, { schema?: unknown }> };
  consumes?: string[];
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  deprecated?: boolean;
  schema?: unknown;
  content?: Record<string, { schema?: unknown }>;
  style?: string;
  explode?: boolean;
  /** Swagger 2.0 keeps the schema keywords on the parameter itself. */
  type?: string;
  collectionFormat?: string;
  [keyword: string]: unknown;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
type HttpMethod = (typeof METHODS)[number];

export type ParamLocation = 'path' | 'query' | 'header';

export interface OperationParam {
  /** Name on the wire. */
  name: string;
  in: ParamLocation;
  /** Property name in the tool's arguments (the wire name unless two locations share it). */
  argKey: string;
  required: boolean;
  /** How arrays and objects are written: OpenAPI `style` (Swagger's collectionFormat mapped onto it). */
  style: string;
  explode: boolean;
  /** The value is sent as JSON text (a parameter described by `content`). */
  json: boolean;
  schema: JsonSchema;
}

export interface OperationBody {
  argKey: string;
  required: boolean;
  /** `text`: a string sent as is (e.g. base64 image data declared as `type: string`). */
  encoding: 'json' | 'form' | 'text';
  contentType: string;
  schema: JsonSchema;
}

/** One operation, ready to become a tool. */
export interface OperationSpec {
  method: Uppercase<HttpMethod>;
  path: string;
  operationId: string;
  tags: string[];
  summary: string | undefined;
  description: string | undefined;
  deprecated: boolean;
  params: OperationParam[];
  body: OperationBody | undefined;
}

/** Operations that pass the filter, and why others were left out. */
export function listOperations(doc: OpenApiDocument, filter: OperationFilter): { operations: OperationSpec[]; warnings: string[] } {
  const operations: OperationSpec[] = [];
  const warnings: string[] = [];
  const seenIds = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!item) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const where = `${method.toUpperCase()} ${path}`;
      if (!op.operationId) {
        warnings.push(`${where}: skipped, the operation has no operationId`);
        continue;
      }
      seenIds.add(op.operationId);
      if (!matches(filter, op, path)) continue;
      const spec = describeOperation(doc, method, path, item, op, warnings);
      if (spec) operations.push(spec);
    }
  }
  if (filter.kind === 'byOperationId') {
    for (const id of filter.ids) if (!seenIds.has(id)) warnings.push(`operationId "${id}" asked for by the filter is not in the spec`);
  }
  return { operations, warnings };
}

function matches(filter: OperationFilter, op: Operation, path: string): boolean {
  switch (filter.kind) {
    case 'all':
      return true;
    case 'byOperationId':
      return filter.ids.includes(op.operationId ?? '');
    case 'byTag':
      return (op.tags ?? []).some((tag) => filter.tags.includes(tag));
    case 'byPathPrefix':
      return path.startsWith(filter.prefix);
  }
}

function describeOperation(
  doc: OpenApiDocument,
  method: HttpMethod,
  path: string,
  item: PathItem,
  op: Operation,
  warnings: string[],
): OperationSpec | undefined {
  const where = `${op.operationId} (${method.toUpperCase()} ${path})`;
  const params: OperationParam[] = [];
  const formFields: Parameter[] = [];
  let swaggerBody: Parameter | undefined;
  const taken = new Set<string>();

  for (const p of mergeParameters(item.parameters, op.parameters)) {
    if (p.in === 'body') swaggerBody = p;
    else if (p.in === 'formData') formFields.push(p);
    else if (p.in === 'cookie') warnings.push(`${where}: cookie parameter "${p.name}" is not supported and is never sent`);
    else if (p.in === 'header' && /^(accept|content-type|authorization)$/i.test(p.name)) {
      // OpenAPI says these header parameters are ignored: content negotiation and auth are ours.
    } else if (p.in === 'path' || p.in === 'query' || p.in === 'header') {
      const argKey = uniqueKey(p.name, p.in, taken);
      taken.add(argKey);
      params.push(toParam(p, p.in, argKey));
    }
  }

  const body = requestBody(doc, op, swaggerBody, formFields, taken, where, warnings);
  if (body === null) return undefined;
  return {
    method: method.toUpperCase() as Uppercase<HttpMethod>,
    path,
    operationId: op.operationId ?? '',
    tags: op.tags ?? [],
    summary: op.summary,
    description: op.description,
    deprecated: op.deprecated === true,
    params,
    body,
  };
}

/** Operation parameters override path-level ones with the same name and location. */
function mergeParameters(pathLevel: Parameter[] = [], opLevel: Parameter[] = []): Parameter[] {
  const byKey = new Map<string, Parameter>();
  for (const p of [...pathLevel, ...opLevel]) byKey.set(`${p.in}:${p.name}`, p);
  return [...byKey.values()];
}

function uniqueKey(name: string, location: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  const qualified = `${location}_${name}`;
  let key = qualified;
  for (let n = 2; taken.has(key); n++) key = `${qualified}_${n}`;
  return key;
}

function toParam(p: Parameter, location: ParamLocation, argKey: string): OperationParam {
  const contentSchema = p.content ? Object.values(p.content)[0]?.schema : undefined;
  const schema = toModelSchema(p.schema ?? contentSchema ?? swaggerSchema(p));
  if (p.description && schema.description === undefined) schema.description = p.description;
  if (p.deprecated) schema.deprecated = true;
  const style = p.style ?? styleOfCollectionFormat(p.collectionFormat) ?? (location === 'query' ? 'form' : 'simple');
  return {
    name: p.name,
    in: location,
    argKey,
    required: location === 'path' || p.required === true,
    style,
    explode: p.explode ?? (p.collectionFormat !== undefined ? p.collectionFormat === 'multi' : style === 'form'),
    json: p.schema === undefined && contentSchema !== undefined,
    schema,
  };
}

/** Swagger 2.0 parameters carry type/items/enum... themselves. */
function swaggerSchema(p: Parameter): Record<string, unknown> {
  const { name: _n, in: _i, required: _r, description: _d, collectionFormat: _c, allowEmptyValue: _a, ...keywords } = p;
  return keywords;
}

function styleOfCollectionFormat(format: string | undefined): string | undefined {
  switch (format) {
    case 'ssv':
      return 'spaceDelimited';
    case 'pipes':
      return 'pipeDelimited';
    case 'csv':
    case 'multi':
      return 'form';
    default:
      return undefined;
  }
}

const JSON_MEDIA = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const FORM_MEDIA = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;

/** The body argument, `undefined` when there is none, `null` when the operation cannot be called. */
function requestBody(
  doc: OpenApiDocument,
  op: Operation,
  swaggerBody: Parameter | undefined,
  formFields: Parameter[],
  taken: ReadonlySet<string>,
  where: string,
  warnings: string[],
): OperationBody | undefined | null {
  const argKey = taken.has('body') ? '_request_body' : 'body';
  if (swaggerBody) {
    return { argKey, required: swaggerBody.required === true, encoding: 'json', contentType: 'application/json', schema: withDescription(toModelSchema(swaggerBody.schema), swaggerBody.description) };
  }
  if (formFields.length > 0) {
    const consumes = op.consumes ?? doc.consumes ?? [];
    if (formFields.some((f) => f.type === 'file') || consumes.some((c) => c.startsWith('multipart/'))) {
      warnings.push(`${where}: skipped, multipart/form-data bodies are not supported`);
      return null;
    }
    const properties = Object.fromEntries(formFields.map((f) => [f.name, withDescription(toModelSchema(swaggerSchema(f)), f.description)]));
    const required = formFields.filter((f) => f.required).map((f) => f.name);
    return {
      argKey,
      required: required.length > 0,
      encoding: 'form',
      contentType: 'application/x-www-form-urlencoded',
      schema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}) },
    };
  }
  const body = op.requestBody;
  if (!body?.content) return undefined;
  const mediaTypes = Object.keys(body.content);
  const content = body.content;
  const json = mediaTypes.find((m) => JSON_MEDIA.test(m));
  const form = mediaTypes.find((m) => FORM_MEDIA.test(m));
  const text = mediaTypes.find((m) => isTextSchema(content[m]?.schema));
  const chosen = json ?? form ?? text;
  if (!chosen) {
    if (body.required) {
      warnings.push(`${where}: skipped, its required request body is ${mediaTypes.join(' or ')}; only JSON, form and string bodies are supported`);
      return null;
    }
    warnings.push(`${where}: its optional ${mediaTypes.join(' or ')} request body is not supported and is never sent`);
    return undefined;
  }
  return {
    argKey,
    required: body.required === true,
    encoding: chosen === json ? 'json' : chosen === form ? 'form' : 'text',
    contentType: chosen,
    schema: withDescription(toModelSchema(content[chosen]?.schema), body.description),
  };
}

/** A body the model can write as one string: `type: string`, not raw binary. */
function isTextSchema(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const { type, format } = schema as { type?: unknown; format?: unknown };
  return type === 'string' && format !== 'binary';
}

function withDescription(schema: JsonSchema, description: string | undefined): JsonSchema {
  if (description && schema.description === undefined) schema.description = description;
  return schema;
}
