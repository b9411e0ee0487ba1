/**
 * Helpers shared by the provider tests: a loopback server (and dispatcher) per test file, requests,
 * running a Provider to the end checking the shape of its stream, and reading what the fixtures
 * and their cassettes say.
 */
import { lastValueFrom, tap, toArray } from 'rxjs';
import type { Observable } from 'rxjs';
import { Agent } from 'undici';
import { afterAll, expect } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { ModelConfig, Provider, ProviderOptions, StreamEvent, StreamRequest } from '../../src/types/provider.js';
import type { AssistantMessage, Message } from '../../src/types/message.js';
import { textOf, toolCallsOf } from '../../src/types/message.js';
import type { ToolCall } from '../../src/types/content.js';
import type { ToolDefinition } from '../../src/types/tool.js';
import { DEFAULT_CACHE_CONFIG } from '../../src/types/config.js';
import { ProviderError } from '../../src/types/errors.js';
import type { ProviderHttpOptions } from '../../src/providers/provider-kit.js';
import { readCassette, startFixtureServer } from './fixture-server.js';
import type { FixtureServer, ManifestEntry } from './fixture-server.js';

export { textOf, toolCallsOf };

export const TEST_KEY = 'sk-test-0123456789abcdefghijklmnop';

// ---------------------------------------------------------------------------------------------
// Loopback

/** A fixture server for this test file, closed after its tests. Call at the top level of the file. */
export async function useFixtureServer(): Promise<FixtureServer> {
  const server = await startFixtureServer();
  afterAll(() => server.close());
  return server;
}

/**
 * A fixture server and a provider on an undici dispatcher of this file's own, both closed after
 * its tests. Call at the top level of the file.
 *
 * @example
 * const { server, dispatcher, provider } = await useLoopbackProvider((http) => createAnthropicProvider(http));
 */
export async function useLoopbackProvider(
  create: (http: ProviderHttpOptions) => Provider,
): Promise<{ server: FixtureServer; dispatcher: Agent; provider: Provider }> {
  const server = await startFixtureServer();
  const dispatcher = new Agent();
  afterAll(async () => {
    await dispatcher.close();
    await server.close();
  });
  return { server, dispatcher, provider: create({ dispatcher }) };
}

// ---------------------------------------------------------------------------------------------
// Requests

/** A one-message request for `model`, with the default cache config. */
export function request(model: ModelConfig, overrides: Partial<StreamRequest> = {}): StreamRequest {
  return {
    model,
    systemPrompt: 'You are a helpful assistant',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }], timestamp: 0 }],
    tools: [],
    thinkingLevel: 'off',
    cacheConfig: DEFAULT_CACHE_CONFIG,
    ...overrides,
  };
}

/** {@link request} with {@link TEST_KEY} when the model has no key, and caching off. */
export function streamRequest(model: ModelConfig, overrides: Partial<StreamRequest> = {}): StreamRequest {
  return request(
    { ...model, apiKey: model.apiKey ?? TEST_KEY },
    { cacheConfig: { enabled: false, strategy: { kind: 'disabled' } }, ...overrides },
  );
}

export const defaultCache = DEFAULT_CACHE_CONFIG;

export const weatherTool: ToolDefinition = {
  name: 'weather',
  description: 'Get weather information for a location',
  parameters: { type: 'object', properties: { location: { type: 'string', description: 'the city' } }, required: ['location'] },
};

/** An assistant turn as `provider`'s `model` produced it: stop reason toolUse, zero usage. */
export function assistantMessage(content: AssistantMessage['content'], provider: string, model: string): AssistantMessage {
  return {
    role: 'assistant',
    content,
    stopReason: 'toolUse',
    model,
    provider,
    usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
    timestamp: 0,
  };
}

export const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }], timestamp: 0 });
export const toolResult = (call: ToolCall, text: string, isError = false): Message => ({
  role: 'toolResult',
  toolCallId: call.id,
  toolName: call.name,
  content: [{ type: 'text', text }],
  isError,
  timestamp: 0,
});

// ---------------------------------------------------------------------------------------------
// Running a provider

export interface RunResult {
  events: StreamEvent[];
  message: AssistantMessage;
}

/** Subscribes, collects every event, checks the stream's shape (start first, one done last) and returns the message. */
export async function run(provider: Provider, req: StreamRequest, options: ProviderOptions = {}): Promise<RunResult> {
  const events = await lastValueFrom(provider(req, options).pipe(toArray()));
  expect(events[0]?.type).toBe('start');
  expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
  const last = events[events.length - 1]!;
  if (last.type !== 'done') throw new Error(`last event is ${last.type}, not done`);
  // The deltas must tell the same story as the final message.
  expect(streamed(events, 'textDelta')).toBe(textOf(last.message));
  return { events, message: last.message };
}

/** {@link run}, also checking that the thinking deltas spell the message's readable thinking. */
export async function runProvider(provider: Provider, req: StreamRequest, options: ProviderOptions = {}): Promise<RunResult> {
  const result = await run(provider, req, options);
  expect(streamed(result.events, 'thinkingDelta')).toBe(thinkingOf(result.message));
  return result;
}

function streamed(events: StreamEvent[], type: 'textDelta' | 'thinkingDelta'): string {
  return events.flatMap((e) => (e.type === type ? [e.delta] : [])).join('');
}

/** Runs a stream that must fail; returns its ProviderError and the events before it. */
export async function runToError(stream: Observable<StreamEvent>): Promise<{ error: ProviderError; events: StreamEvent[] }> {
  const events: StreamEvent[] = [];
  try {
    await lastValueFrom(stream.pipe(tap((e) => events.push(e))), { defaultValue: undefined });
  } catch (e) {
    expect(e).toBeInstanceOf(ProviderError);
    return { error: e as ProviderError, events };
  }
  throw new Error('the stream completed; an error was expected');
}

/** The readable thinking of a message (redacted blocks carry none). */
export function thinkingOf(message: AssistantMessage): string {
  return message.content.flatMap((c) => (c.type === 'thinking' && !c.redacted ? [c.thinking] : [])).join('');
}

/** Each tool call's id, name and arguments: what the model asked for, without provider extras. */
export const callsOf = (m: AssistantMessage): Array<Pick<ToolCall, 'id' | 'name' | 'arguments'>> =>
  toolCallsOf(m).map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));

// ---------------------------------------------------------------------------------------------
// Cassettes: the requests the fixtures were recorded with

/** The first request of the cassette a fixture was extracted from: its URL and JSON body, when recorded. */
export function cassetteRequest(entry: ManifestEntry): { url: string; body: Record<string, unknown> } | undefined {
  const repo = typeof entry['repo'] === 'string' ? entry['repo'] : undefined;
  const file = typeof entry['path'] === 'string' ? entry['path'] : undefined;
  if (!repo || !file || !file.endsWith('.yaml')) return undefined;
  const text = readCassette(`${repo.replace('/', '__')}/${file}`);
  if (text === undefined) return undefined;
  const doc = parseYaml(text) as { interactions?: Array<{ request?: Record<string, unknown> }> };
  const interaction = doc.interactions?.[typeof entry['interaction'] === 'number' ? entry['interaction'] : 0];
  const req = interaction?.request;
  if (!req) return undefined;
  const url = String(req['url'] ?? req['uri'] ?? '');
  if (req['parsed_body'] && typeof req['parsed_body'] === 'object') return { url, body: req['parsed_body'] as Record<string, unknown> };
  if (typeof req['body'] === 'string' && req['body'].startsWith('{')) return { url, body: JSON.parse(req['body']) as Record<string, unknown> };
  return undefined;
}

/** The text of the first user message in a recorded request body (string or content-array form). */
export function firstUserText(body: Record<string, unknown>): string {
  const messages = (body['messages'] ?? []) as Array<{ role: string; content: unknown }>;
  const first = messages.find((m) => m.role === 'user');
  if (!first) return '';
  if (typeof first.content === 'string') return first.content;
  return (first.content as Array<{ type: string; text?: string }>).flatMap((c) => (c.text ? [c.text] : [])).join('');
}

export function systemText(body: Record<string, unknown>): string {
  const system = body['system'];
  if (Array.isArray(system)) return system.map((b: { text?: string }) => b.text ?? '').join('');
  if (typeof system === 'string') return system;
  const messages = (body['messages'] ?? []) as Array<{ role: string; content: unknown }>;
  const sys = messages.find((m) => m.role === 'system' || m.role === 'developer');
  return typeof sys?.content === 'string' ? sys.content : '';
}

/** Tool definitions of a recorded request, in our ToolDefinition form (both wire shapes). */
export function recordedTools(body: Record<string, unknown>): ToolDefinition[] {
  const tools = (body['tools'] ?? []) as Array<Record<string, unknown>>;
  return tools.map((t) => {
    const fn = (t['function'] ?? t) as Record<string, unknown>;
    return {
      name: String(fn['name']),
      description: String(fn['description'] ?? ''),
      parameters: (fn['parameters'] ?? fn['input_schema'] ?? {}) as Record<string, unknown>,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Gemini manifest facts (shared by the Gemini and Vertex tests)

export interface GoogleFacts {
  text: string;
  thought_text: string;
  function_calls: Array<{ name?: string; args?: Record<string, unknown>; id?: string }>;
  finish_reasons: string[];
  usage: {
    promptTokenCount: number;
    candidatesTokenCount?: number;
    thoughtsTokenCount?: number;
    cachedContentTokenCount?: number;
    toolUsePromptTokenCount?: number;
    totalTokenCount: number;
  };
  parts_with_thoughtSignature: number;
  model: string;
  partial_args_chunks: number;
}

/** The calls a Gemini fixture should produce; a streamed-arguments fixture lists fragments, so its calls are spelled out. */
export function expectedGoogleCalls(entry: ManifestEntry, idPrefix: string): Array<{ id: string; name: string; arguments: Record<string, unknown> }> {
  const facts = entry.facts as unknown as GoogleFacts;
  if (facts.partial_args_chunks > 0) {
    // MANIFEST.md: "2 calls: getWeather {location:"Boston"} then getWeather {location:"San Francisco"}".
    return [
      { id: `${idPrefix}0`, name: 'getWeather', arguments: { location: 'Boston' } },
      { id: `${idPrefix}1`, name: 'getWeather', arguments: { location: 'San Francisco' } },
    ];
  }
  return facts.function_calls.map((c, i) => ({ id: c.id ?? `${idPrefix}${i}`, name: c.name!, arguments: c.args ?? {} }));
}

export function expectMatchesGoogleFacts(message: AssistantMessage, entry: ManifestEntry, idPrefix: string): void {
  const facts = entry.facts as unknown as GoogleFacts;
  expect(textOf(message)).toBe(facts.text);
  expect(thinkingOf(message)).toBe(facts.thought_text);
  const calls = callsOf(message);
  expect(calls).toEqual(expectedGoogleCalls(entry, idPrefix));
  expect(facts.finish_reasons.at(-1)).toBe('STOP');
  expect(message.stopReason).toBe(calls.length > 0 ? 'toolUse' : 'stop');
  expect(message.model).toBe(facts.model);
  const signed = message.content.filter((c) => c.type === 'thinking' && c.signature !== undefined);
  expect(signed).toHaveLength(facts.parts_with_thoughtSignature);
  const u = facts.usage;
  const cached = u.cachedContentTokenCount ?? 0;
  const thoughts = u.thoughtsTokenCount ?? 0;
  expect(message.usage).toEqual({
    input: u.promptTokenCount + (u.toolUsePromptTokenCount ?? 0) - cached,
    output: (u.candidatesTokenCount ?? 0) + thoughts,
    reasoning: thoughts,
    cacheRead: cached,
    cacheWrite: 0,
    totalTokens: u.totalTokenCount,
  });
  expect(message.usage.input + message.usage.output + message.usage.cacheRead).toBe(u.totalTokenCount);
}
