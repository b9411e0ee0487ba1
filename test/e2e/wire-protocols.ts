/**
 * The seven wire protocols as a loopback server speaks them, for the end-to-end tests: how a
 * scripted assistant turn is streamed back (SSE, or AWS event-stream frames for Bedrock), and
 * how the previous turn's tool call and tool result are found in the next request body, each in
 * that protocol's own shape. Written from the public API references; nothing is shared with the
 * providers under test, so a provider that drifts from the wire format fails here.
 */
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { IncomingHttpHeaders } from 'node:http';
import type { ApiProtocol, ModelConfig } from '../../src/types/provider.js';
import type { Usage } from '../../src/types/usage.js';
import { anthropic, azureOpenai, bedrock, google, googleVertex, openai, openaiResponses } from '../../src/providers/index.js';
import type { FixtureResponse } from '../providers/fixture-server.js';

export const FAKE_KEY = 'e2e-fake-key-0123456789abcdefghij';

/** One scripted assistant turn: text, then at most one tool call; usage in phi-rx's terms. */
export interface ScriptedTurn {
  text: string;
  toolCall?: { id: string; name: string; arguments: Record<string, unknown> };
  usage: { input: number; output: number; cacheRead: number };
}

/** A tool call or tool result as read back from a request body. `id` is absent where the wire has none. */
export interface EchoedCall {
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Gemini's thoughtSignature, when the part carried one. */
  signature?: string;
}
export interface EchoedResult {
  id?: string;
  name?: string;
  text: string;
  isError: boolean;
}

export interface WireProtocol {
  /** Test label. */
  label: string;
  api: ApiProtocol;
  model(baseUrl: string): ModelConfig;
  /** The path and query every request must hit. */
  path: string;
  /** True when the request carries the fake key the way this protocol sends it. */
  authorized(headers: IncomingHttpHeaders): boolean;
  /** Tool-call ids are the protocol's business; Gemini 2.x sends none. */
  callId(id: string): string | undefined;
  /** The thoughtSignature a call must carry when echoed back (Gemini 3), if any. */
  callSignature?(id: string): string;
  respond(turn: ScriptedTurn): FixtureResponse;
  systemPrompt(body: Body): string | undefined;
  declaredTools(body: Body): string[];
  /** The last assistant tool call and the tool result after it, in the request body. */
  lastExchange(body: Body): { call?: EchoedCall; result?: EchoedResult };
}

type Body = Record<string, unknown>;
type Json = Record<string, unknown>;

/** The Usage the provider must report for a turn: totals are input + output + cache reads. */
export function expectedUsage(turn: ScriptedTurn): Usage {
  const { input, output, cacheRead } = turn.usage;
  return { input, output, reasoning: 0, cacheRead, cacheWrite: 0, totalTokens: input + output + cacheRead };
}

/** Cuts a string into `n` roughly equal pieces, so that text and arguments arrive as several deltas. */
function pieces(text: string, n = 3): string[] {
  const size = Math.max(1, Math.ceil(text.length / n));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

const sse = (events: Array<[event: string | undefined, data: unknown]>): string =>
  events.map(([event, data]) => `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`).join('');

const asArray = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);
const last = <T>(items: T[], predicate: (item: T) => boolean): T | undefined => [...items].reverse().find(predicate);
const parseArgs = (text: unknown): Record<string, unknown> => (typeof text === 'string' ? (JSON.parse(text) as Record<string, unknown>) : {});
const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};
const bearer = (headers: IncomingHttpHeaders): boolean => header(headers, 'authorization') === `Bearer ${FAKE_KEY}`;

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

const anthropicMessages: WireProtocol = {
  label: 'anthropic-messages',
  api: 'anthropic-messages',
  model: (baseUrl) => anthropic('claude-sonnet-4-5', { baseUrl, apiKey: FAKE_KEY }),
  path: '/v1/messages',
  authorized: (h) => header(h, 'x-api-key') === FAKE_KEY && header(h, 'anthropic-version') === '2023-06-01',
  callId: (id) => `toolu_${id}`,
  respond: (turn) => {
    const u = turn.usage;
    const events: Array<[string, unknown]> = [
      ['message_start', { type: 'message_start', message: { id: 'msg_e2e', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [], stop_reason: null, usage: { input_tokens: u.input, cache_read_input_tokens: u.cacheRead, cache_creation_input_tokens: 0, output_tokens: 1 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      ['ping', { type: 'ping' }],
      ...pieces(turn.text).map((text): [string, unknown] => ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }]),
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ];
    const call = turn.toolCall;
    if (call) {
      events.push(['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: `toolu_${call.id}`, name: call.name, input: {} } }]);
      for (const partial_json of pieces(JSON.stringify(call.arguments))) {
        events.push(['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json } }]);
      }
      events.push(['content_block_stop', { type: 'content_block_stop', index: 1 }]);
    }
    events.push(
      ['message_delta', { type: 'message_delta', delta: { stop_reason: call ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: u.output } }],
      ['message_stop', { type: 'message_stop' }],
    );
    return { body: sse(events) };
  },
  systemPrompt: (body) => asArray(body['system']).map((b) => String(b['text'] ?? '')).join(''),
  declaredTools: (body) => asArray(body['tools']).map((t) => String(t['name'])),
  lastExchange: (body) => {
    const messages = asArray(body['messages']);
    const assistant = last(messages, (m) => m['role'] === 'assistant');
    const use = last(asArray(assistant?.['content']), (b) => b['type'] === 'tool_use');
    const userTurn = messages[messages.length - 1];
    const result = last(asArray(userTurn?.['content']), (b) => b['type'] === 'tool_result');
    return {
      call: use && { id: String(use['id']), name: String(use['name']), arguments: use['input'] as Record<string, unknown> },
      result: result && {
        id: String(result['tool_use_id']),
        text: asArray(result['content']).map((c) => String(c['text'] ?? '')).join(''),
        isError: result['is_error'] === true,
      },
    };
  },
};

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions (also Azure's chat wire)

function chatCompletionsStream(turn: ScriptedTurn, model: string): FixtureResponse {
  const u = turn.usage;
  const chunk = (delta: Json, finish: string | null = null): Json => ({
    id: 'chatcmpl-e2e', object: 'chat.completion.chunk', created: 1_700_000_000, model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const data: unknown[] = [chunk({ role: 'assistant', content: '' }), ...pieces(turn.text).map((content) => chunk({ content }))];
  const call = turn.toolCall;
  if (call) {
    data.push(chunk({ tool_calls: [{ index: 0, id: `call_${call.id}`, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const args of pieces(JSON.stringify(call.arguments))) data.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }));
  }
  data.push(chunk({}, call ? 'tool_calls' : 'stop'));
  data.push({
    id: 'chatcmpl-e2e', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [],
    usage: {
      prompt_tokens: u.input + u.cacheRead, completion_tokens: u.output, total_tokens: u.input + u.cacheRead + u.output,
      prompt_tokens_details: { cached_tokens: u.cacheRead }, completion_tokens_details: { reasoning_tokens: 0 },
    },
  });
  data.push('[DONE]');
  return { body: sse(data.map((d) => [undefined, d])) };
}

function chatExchange(body: Body): { call?: EchoedCall; result?: EchoedResult } {
  const messages = asArray(body['messages']);
  const assistant = last(messages, (m) => m['role'] === 'assistant');
  const call = asArray(assistant?.['tool_calls'])[0];
  const fn = call?.['function'] as Json | undefined;
  const tail = messages[messages.length - 1];
  return {
    call: call && fn && { id: String(call['id']), name: String(fn['name']), arguments: parseArgs(fn['arguments']) },
    result: tail?.['role'] === 'tool' ? { id: String(tail['tool_call_id']), text: String(tail['content']), isError: false } : undefined,
  };
}

const chatSystem = (body: Body): string | undefined => {
  const first = asArray(body['messages'])[0];
  return first && (first['role'] === 'system' || first['role'] === 'developer') ? String(first['content']) : undefined;
};
const chatTools = (body: Body): string[] => asArray(body['tools']).map((t) => String((t['function'] as Json)['name']));

const openaiCompletions: WireProtocol = {
  label: 'openai-completions',
  api: 'openai-completions',
  model: (baseUrl) => openai('gpt-4.1-mini', { baseUrl, apiKey: FAKE_KEY }),
  path: '/chat/completions',
  authorized: bearer,
  callId: (id) => `call_${id}`,
  respond: (turn) => chatCompletionsStream(turn, 'gpt-4.1-mini-2025-04-14'),
  systemPrompt: chatSystem,
  declaredTools: chatTools,
  lastExchange: chatExchange,
};

// ---------------------------------------------------------------------------------------------
// OpenAI Responses (also Azure's default wire)

function responsesStream(turn: ScriptedTurn, model: string): FixtureResponse {
  const u = turn.usage;
  const text = turn.text;
  const events: Array<[string, Json]> = [
    ['response.created', { response: { id: 'resp_e2e', object: 'response', model, status: 'in_progress', output: [] } }],
    ['response.in_progress', { response: { id: 'resp_e2e', object: 'response', model, status: 'in_progress', output: [] } }],
    ['response.output_item.added', { output_index: 0, item: { id: 'msg_e2e', type: 'message', status: 'in_progress', role: 'assistant', content: [] } }],
    ['response.content_part.added', { output_index: 0, item_id: 'msg_e2e', content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }],
    ...pieces(text).map((delta): [string, Json] => ['response.output_text.delta', { output_index: 0, item_id: 'msg_e2e', content_index: 0, delta }]),
    ['response.output_text.done', { output_index: 0, item_id: 'msg_e2e', content_index: 0, text }],
    ['response.output_item.done', { output_index: 0, item: { id: 'msg_e2e', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] } }],
  ];
  const call = turn.toolCall;
  if (call) {
    const args = JSON.stringify(call.arguments);
    const item = { id: `fc_${call.id}`, type: 'function_call', status: 'in_progress', call_id: `call_${call.id}`, name: call.name, arguments: '' };
    events.push(['response.output_item.added', { output_index: 1, item }]);
    for (const delta of pieces(args)) events.push(['response.function_call_arguments.delta', { output_index: 1, item_id: item.id, delta }]);
    events.push(['response.function_call_arguments.done', { output_index: 1, item_id: item.id, arguments: args }]);
    events.push(['response.output_item.done', { output_index: 1, item: { ...item, status: 'completed', arguments: args } }]);
  }
  events.push(['response.completed', {
    response: {
      id: 'resp_e2e', object: 'response', model, status: 'completed',
      usage: {
        input_tokens: u.input + u.cacheRead, input_tokens_details: { cached_tokens: u.cacheRead },
        output_tokens: u.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: u.input + u.cacheRead + u.output,
      },
    },
  }]);
  return { body: sse(events.map(([type, data], i) => [type, { type, sequence_number: i, ...data }])) };
}

function responsesExchange(body: Body): { call?: EchoedCall; result?: EchoedResult } {
  const input = asArray(body['input']);
  const call = last(input, (i) => i['type'] === 'function_call');
  const tail = input[input.length - 1];
  return {
    call: call && { id: String(call['call_id']), name: String(call['name']), arguments: parseArgs(call['arguments']) },
    result: tail?.['type'] === 'function_call_output' ? { id: String(tail['call_id']), text: String(tail['output']), isError: false } : undefined,
  };
}

const responsesTools = (body: Body): string[] => asArray(body['tools']).map((t) => String(t['name']));

const openaiResponsesWire: WireProtocol = {
  label: 'openai-responses',
  api: 'openai-responses',
  model: (baseUrl) => openaiResponses('gpt-5-mini', { baseUrl, apiKey: FAKE_KEY }),
  path: '/responses',
  authorized: bearer,
  callId: (id) => `call_${id}`,
  respond: (turn) => responsesStream(turn, 'gpt-5-mini-2025-08-07'),
  systemPrompt: (body) => (typeof body['instructions'] === 'string' ? body['instructions'] : undefined),
  declaredTools: responsesTools,
  lastExchange: responsesExchange,
};

// ---------------------------------------------------------------------------------------------
// Azure OpenAI: a deployment URL with api-version, the `api-key` header

const AZURE_VERSION = '2025-01-01-preview';
const azureAuthorized = (h: IncomingHttpHeaders): boolean => header(h, 'api-key') === FAKE_KEY && header(h, 'authorization') === undefined;

const azureResponses: WireProtocol = {
  label: 'azure-openai (responses wire)',
  api: 'azure-openai',
  model: (baseUrl) => azureOpenai('e2e-gpt-5-mini', { baseUrl: `${baseUrl}/openai/deployments/e2e-gpt-5-mini`, apiVersion: AZURE_VERSION, apiKey: FAKE_KEY }),
  path: `/openai/deployments/e2e-gpt-5-mini/responses?api-version=${AZURE_VERSION}`,
  authorized: azureAuthorized,
  callId: (id) => `call_${id}`,
  respond: (turn) => responsesStream(turn, 'gpt-5-mini-2025-08-07'),
  systemPrompt: (body) => (typeof body['instructions'] === 'string' ? body['instructions'] : undefined),
  declaredTools: responsesTools,
  lastExchange: responsesExchange,
};

const azureChat: WireProtocol = {
  label: 'azure-openai (chat wire)',
  api: 'azure-openai',
  model: (baseUrl) =>
    azureOpenai('e2e-gpt-4o', { baseUrl: `${baseUrl}/openai/deployments/e2e-gpt-4o`, apiVersion: AZURE_VERSION, apiKey: FAKE_KEY, wire: 'chat' }),
  path: `/openai/deployments/e2e-gpt-4o/chat/completions?api-version=${AZURE_VERSION}`,
  authorized: azureAuthorized,
  callId: (id) => `call_${id}`,
  respond: (turn) => chatCompletionsStream(turn, 'gpt-4o-2024-11-20'),
  systemPrompt: chatSystem,
  declaredTools: chatTools,
  lastExchange: chatExchange,
};

// ---------------------------------------------------------------------------------------------
// Gemini (Generative Language API) and Vertex AI: the same stream, different URL and auth

interface GeminiStyle {
  /** Gemini 3 gives each call an id and a thoughtSignature; Gemini 2.x gives neither. */
  ids: boolean;
  modelVersion: string;
}

function geminiStream(turn: ScriptedTurn, style: GeminiStyle): FixtureResponse {
  const u = turn.usage;
  const chunk = (parts: Json[], candidate: Json = {}, top: Json = {}): Json => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...candidate }],
    modelVersion: style.modelVersion,
    responseId: 'e2e-response',
    ...top,
  });
  const texts = pieces(turn.text);
  const data: Json[] = texts.slice(0, -1).map((text) => chunk([{ text }]));
  const lastParts: Json[] = [{ text: texts[texts.length - 1] ?? '' }];
  const call = turn.toolCall;
  if (call) {
    const functionCall: Json = { name: call.name, args: call.arguments };
    if (style.ids) functionCall['id'] = `fc-${call.id}`;
    lastParts.push(style.ids ? { functionCall, thoughtSignature: `sig-${call.id}` } : { functionCall });
  }
  const usageMetadata = {
    promptTokenCount: u.input + u.cacheRead,
    cachedContentTokenCount: u.cacheRead,
    candidatesTokenCount: u.output,
    totalTokenCount: u.input + u.cacheRead + u.output,
  };
  // Gemini has no terminal event: the last chunk carries finishReason and the usage.
  data.push(chunk(lastParts, { finishReason: 'STOP' }, { usageMetadata }));
  return { body: sse(data.map((d) => [undefined, d])) };
}

function geminiExchange(body: Body): { call?: EchoedCall; result?: EchoedResult } {
  const contents = asArray(body['contents']);
  const modelTurn = last(contents, (c) => c['role'] === 'model');
  const callPart = last(asArray(modelTurn?.['parts']), (p) => p['functionCall'] !== undefined);
  const fc = callPart?.['functionCall'] as Json | undefined;
  const tail = contents[contents.length - 1];
  const responsePart = tail?.['role'] === 'user' ? last(asArray(tail['parts']), (p) => p['functionResponse'] !== undefined) : undefined;
  const fr = responsePart?.['functionResponse'] as Json | undefined;
  const response = (fr?.['response'] ?? {}) as Json;
  const call: EchoedCall | undefined = fc && { name: String(fc['name']), arguments: (fc['args'] ?? {}) as Record<string, unknown> };
  if (call && typeof fc?.['id'] === 'string') call.id = fc['id'];
  if (call && typeof callPart?.['thoughtSignature'] === 'string') call.signature = callPart['thoughtSignature'];
  const result: EchoedResult | undefined = fr && {
    name: String(fr['name']),
    text: String(response['result'] ?? response['error'] ?? ''),
    isError: 'error' in response,
  };
  if (result && typeof fr?.['id'] === 'string') result.id = fr['id'];
  return { call, result };
}

const geminiSystem = (body: Body): string | undefined =>
  asArray((body['systemInstruction'] as Json | undefined)?.['parts']).map((p) => String(p['text'] ?? '')).join('');
const geminiTools = (body: Body): string[] =>
  asArray(body['tools']).flatMap((t) => asArray(t['functionDeclarations']).map((d) => String(d['name'])));

const gemini: WireProtocol = {
  label: 'google-generative-ai',
  api: 'google-generative-ai',
  model: (baseUrl) => google('gemini-2.5-flash', { baseUrl, apiKey: FAKE_KEY }),
  path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
  authorized: (h) => header(h, 'x-goog-api-key') === FAKE_KEY,
  callId: () => undefined,
  respond: (turn) => geminiStream(turn, { ids: false, modelVersion: 'gemini-2.5-flash' }),
  systemPrompt: geminiSystem,
  declaredTools: geminiTools,
  lastExchange: geminiExchange,
};

const vertex: WireProtocol = {
  label: 'google-vertex',
  api: 'google-vertex',
  model: (baseUrl) => googleVertex('gemini-3-pro-preview', { baseUrl, apiKey: FAKE_KEY, project: 'phi-rx-e2e', region: 'europe-west4' }),
  path: '/v1/projects/phi-rx-e2e/locations/europe-west4/publishers/google/models/gemini-3-pro-preview:streamGenerateContent?alt=sse',
  authorized: bearer,
  callId: (id) => `fc-${id}`,
  callSignature: (id) => `sig-${id}`,
  respond: (turn) => geminiStream(turn, { ids: true, modelVersion: 'gemini-3-pro-preview' }),
  systemPrompt: geminiSystem,
  declaredTools: geminiTools,
  lastExchange: geminiExchange,
};

// ---------------------------------------------------------------------------------------------
// Bedrock ConverseStream: binary AWS event-stream frames

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One ConverseStream event as a frame, with the headers Bedrock sets. */
export function eventFrame(eventType: string, payload: Json): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

function converseStream(turn: ScriptedTurn): FixtureResponse {
  const u = turn.usage;
  const frames: Uint8Array[] = [
    eventFrame('messageStart', { role: 'assistant' }),
    ...pieces(turn.text).map((text) => eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text } })),
    eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
  ];
  const call = turn.toolCall;
  if (call) {
    frames.push(eventFrame('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: `tooluse_${call.id}`, name: call.name } } }));
    for (const input of pieces(JSON.stringify(call.arguments))) {
      frames.push(eventFrame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input } } }));
    }
    frames.push(eventFrame('contentBlockStop', { contentBlockIndex: 1 }));
  }
  frames.push(
    eventFrame('messageStop', { stopReason: call ? 'tool_use' : 'end_turn' }),
    eventFrame('metadata', {
      usage: { inputTokens: u.input, outputTokens: u.output, cacheReadInputTokens: u.cacheRead, cacheWriteInputTokens: 0, totalTokens: u.input + u.output + u.cacheRead },
      metrics: { latencyMs: 42 },
    }),
  );
  return { headers: { 'content-type': 'application/vnd.amazon.eventstream' }, body: Buffer.concat(frames) };
}

const BEDROCK_MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';

const bedrockConverse: WireProtocol = {
  label: 'bedrock-converse-stream',
  api: 'bedrock-converse-stream',
  model: (baseUrl) => bedrock(BEDROCK_MODEL, { baseUrl, apiKey: FAKE_KEY, region: 'us-west-2' }),
  path: `/model/${encodeURIComponent(BEDROCK_MODEL)}/converse-stream`,
  authorized: bearer,
  callId: (id) => `tooluse_${id}`,
  respond: converseStream,
  systemPrompt: (body) => asArray(body['system']).map((b) => (typeof b['text'] === 'string' ? b['text'] : '')).join(''),
  declaredTools: (body) =>
    asArray((body['toolConfig'] as Json | undefined)?.['tools']).flatMap((t) => (t['toolSpec'] ? [String((t['toolSpec'] as Json)['name'])] : [])),
  lastExchange: (body) => {
    const messages = asArray(body['messages']);
    const assistant = last(messages, (m) => m['role'] === 'assistant');
    const use = last(asArray(assistant?.['content']), (b) => b['toolUse'] !== undefined)?.['toolUse'] as Json | undefined;
    const tail = messages[messages.length - 1];
    const result = tail?.['role'] === 'user' ? (last(asArray(tail['content']), (b) => b['toolResult'] !== undefined)?.['toolResult'] as Json | undefined) : undefined;
    return {
      call: use && { id: String(use['toolUseId']), name: String(use['name']), arguments: use['input'] as Record<string, unknown> },
      result: result && {
        id: String(result['toolUseId']),
        text: asArray(result['content']).map((c) => String(c['text'] ?? '')).join(''),
        isError: result['status'] === 'error',
      },
    };
  },
};

/** Every protocol, plus Azure's second wire format. */
export const WIRE_PROTOCOLS: readonly WireProtocol[] = [
  anthropicMessages,
  openaiCompletions,
  openaiResponsesWire,
  azureResponses,
  azureChat,
  gemini,
  vertex,
  bedrockConverse,
];
