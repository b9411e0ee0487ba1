import { runtimeEnv } from './runtime-env.js';
import { defer, from, switchMap } from 'rxjs';
import type { ModelConfig, Provider } from '../types/provider.js';
import { ProviderError } from '../types/errors.js';
import { joinUrl } from '../sources/http/index.js';
import { importOptionalPeer } from '../util/optional-peer.js';
import { requestSecrets, resolveApiKey, streamProvider, withModelHeaders } from './provider-kit.js';
import type { ProviderHttpOptions } from './provider-kit.js';
import { buildBedrockBody } from './bedrock-request.js';
import { BedrockStreamParser, decodeEventStream, loadEventStreamDecoder } from './bedrock-reader.js';
import type { EventStreamDecoder } from './bedrock-reader.js';

export { BEDROCK_THINKING_BUDGETS, buildBedrockBody, buildBedrockMessages } from './bedrock-request.js';
export type { BedrockContentBlock, BedrockMessage, BedrockRequestBody } from './bedrock-request.js';
export { BedrockStreamParser, decodeEventStream, loadEventStreamDecoder } from './bedrock-reader.js';
export type { BedrockStreamMessage, EventStreamDecoder } from './bedrock-reader.js';

/*
 * Amazon Bedrock ConverseStream: `POST {baseUrl}/model/{model}/converse-stream`, answered with an
 * AWS event stream (binary frames, `application/vnd.amazon.eventstream`). The request body is built
 * in ./bedrock-request.ts and the event stream read in ./bedrock-reader.ts; this file holds auth and
 * the Provider. Requests are signed by @smithy/signature-v4, or carry a Bedrock API key as a bearer
 * token. The @smithy packages load lazily, on the first call.
 */

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface BedrockProviderOptions extends ProviderHttpOptions {
  /**
   * AWS credentials for SigV4, or a function returning them (called per request, so it can refresh).
   * Default: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN`. Ignored when a bearer
   * key is available.
   */
  credentials?: AwsCredentials | (() => AwsCredentials | Promise<AwsCredentials>);
}

type Env = Record<string, string | undefined>;

/** The AWS region of a model: `model.region`, else `AWS_REGION` / `AWS_DEFAULT_REGION`, else us-east-1. */
export function bedrockRegion(model: ModelConfig, env: Record<string, string | undefined> = runtimeEnv()): string {
  return model.region ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'] ?? 'us-east-1';
}

/** `{baseUrl ?? https://bedrock-runtime.{region}.amazonaws.com}/model/{model}/converse-stream` */
export function bedrockStreamUrl(model: ModelConfig, env: Record<string, string | undefined> = runtimeEnv()): string {
  const base = model.baseUrl ?? `https://bedrock-runtime.${bedrockRegion(model, env)}.amazonaws.com`;
  return joinUrl(base, `model/${encodeURIComponent(model.id)}/converse-stream`);
}

export const AWS_BEARER_TOKEN_ENV = 'AWS_BEARER_TOKEN_BEDROCK';

function envCredentials(env: Env): AwsCredentials | undefined {
  const accessKeyId = env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'];
  if (!accessKeyId || !secretAccessKey) return undefined;
  const sessionToken = env['AWS_SESSION_TOKEN'];
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

/** Signs a request with SigV4 for service `bedrock`; returns the headers to send. */
export async function signBedrockRequest(
  url: string,
  headers: Record<string, string>,
  body: string,
  region: string,
  credentials: AwsCredentials,
): Promise<Record<string, string>> {
  const [{ SignatureV4 }, { Sha256 }] = await Promise.all([
    importOptionalPeer<typeof import('@smithy/signature-v4')>('@smithy/signature-v4', 'Bedrock request signing'),
    importOptionalPeer<typeof import('@aws-crypto/sha256-js')>('@aws-crypto/sha256-js', 'Bedrock request signing'),
  ]);
  const target = new URL(url);
  const signer = new SignatureV4({ credentials, region, service: 'bedrock', sha256: Sha256 });
  const query: Record<string, string> = {};
  target.searchParams.forEach((value, key) => (query[key] = value));
  const signed = await signer.sign({
    method: 'POST',
    protocol: target.protocol,
    hostname: target.hostname,
    ...(target.port ? { port: Number(target.port) } : {}),
    path: target.pathname,
    query,
    headers: { ...headers, host: target.host },
    body,
  });
  // undici writes the same Host header from the URL; sending it twice would be an error.
  const { host: _host, ...rest } = signed.headers as Record<string, string>;
  return rest;
}

/**
 * A Provider for Bedrock ConverseStream. Auth, in order: a bearer key (the call's key, the
 * model's `apiKey`, else `AWS_BEARER_TOKEN_BEDROCK`); SigV4 with `options.credentials` or the
 * `AWS_*` environment; else the model's own `headers` (e.g. a gateway's auth header).
 *
 * @example
 * registry.register('bedrock-converse-stream', createBedrockProvider({ credentials: () => fetchRoleCredentials() }));
 */
export function createBedrockProvider(options: BedrockProviderOptions = {}): Provider {
  const { credentials, ...http } = options;
  return (request, providerOptions) =>
    defer(() => {
      const { model } = request;
      const provider = model.provider;
      const env = http.env ?? runtimeEnv();
      const url = bedrockStreamUrl(model, env);
      const body = JSON.stringify(buildBedrockBody(request));
      const bearer = resolveApiKey(request, AWS_BEARER_TOKEN_ENV, http);
      const baseHeaders = withModelHeaders({ 'content-type': 'application/json', accept: 'application/vnd.amazon.eventstream' }, model);
      const prepare = async (): Promise<{ decoder: EventStreamDecoder; headers: Record<string, string>; secrets: string[] }> => {
        const decoder = await loadEventStreamDecoder();
        if (bearer) {
          const headers = { ...baseHeaders, authorization: `Bearer ${bearer}` };
          return { decoder, headers, secrets: requestSecrets(headers, model, bearer) };
        }
        const aws = typeof credentials === 'function' ? await credentials() : credentials ?? envCredentials(env);
        if (aws) {
          const headers = await signBedrockRequest(url, baseHeaders, body, bedrockRegion(model, env), aws);
          return { decoder, headers, secrets: requestSecrets(headers, model, aws.secretAccessKey, aws.sessionToken) };
        }
        if (Object.keys(model.headers ?? {}).some((h) => h.toLowerCase() === 'authorization')) {
          return { decoder, headers: baseHeaders, secrets: requestSecrets(baseHeaders, model) };
        }
        throw ProviderError.auth(
          `No credentials for Bedrock model "${model.id}": set a Bedrock API key (apiKey / AWS_BEARER_TOKEN_BEDROCK) ` +
            `or AWS credentials (createBedrockProvider({ credentials }) / AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY).`,
          { provider },
        );
      };
      return from(prepare()).pipe(
        switchMap(({ decoder, headers, secrets }) =>
          streamProvider(
            request,
            providerOptions,
            {
              url,
              headers,
              provider,
              secrets,
              body: () => body,
              decode: decodeEventStream(decoder, provider, secrets, http.maxEventBytes),
              parser: (builder) => new BedrockStreamParser(builder, provider, secrets, request.responseFormat?.name),
            },
            http,
          ),
        ),
      );
    });
}

/** The Bedrock Provider with default transport settings and credentials from the environment. */
export const bedrockProvider: Provider = createBedrockProvider();
