/**
 * Test helpers for the providers of part B (Responses, Gemini, Vertex, Bedrock): run a Provider
 * to the end and summarise what it produced, and build requests.
 */
import { lastValueFrom, toArray } from 'rxjs';
import type { Observable } from 'rxjs';
import { expect } from 'vitest';
import type { ModelConfig, Provider, ProviderOptions, StreamEvent, StreamRequest } from '../../../src/types/provider.js';
import type { AssistantMessage, Message } from '../../../src/types/message.js';
import type { ToolCall } from '../../../src/types/content.js';
import type { ToolDefinition } from '../../../src/types/tool.js';
import { DEFAULT_CACHE_CONFIG } from '../../../src/types/config.js';
import { ProviderError } from '../../../src/types/errors.js';
import type { ManifestEntry } from './fixture-server.js';

export interface RunResult {
  events: StreamEvent[];
  message: AssistantMessage;
}

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

export const weatherTool: ToolDefinition = {
  name: 'weather',
  description: 'Get weather information for a location',
  parameters: { type: 'object', properties: { location: { type: 'string', description: 'the city' } }, required: ['location'] },
};

/** Subscribes, collects every event, checks the stream's shape (start first, one done last) and returns the message. */
export async function run(provider: Provider, req: StreamRequest, options: ProviderOptions = {}): Promise<RunResult> {
  const events = await lastValueFrom(provider(req, options).pipe(toArray()));
  expect(events[0]?.type).toBe('start');
  expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
  const last = events[events.length - 1]!;
  if (last.type !== 'done') throw new Error(`last event is ${last.type}, not done`);
  // The deltas must tell the same story as the final message.
  const text = events.flatMap((e) => (e.type === 'textDelta' ? [e.delta] : [])).join('');
  expect(text).toBe(textOf(last.message));
  return { events, message: last.message };
}

/** Runs a stream expected to fail and returns its ProviderError. */
export async function runToError(stream: Observable<StreamEvent>): Promise<ProviderError> {
  try {
    await lastValueFrom(stream.pipe(toArray()));
  } catch (e) {
    expect(e).toBeInstanceOf(ProviderError);
    return e as ProviderError;
  }
  throw new Error('stream completed; an error was expected');
}

export const textOf = (m: AssistantMessage): string =>
  m.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
export const thinkingOf = (m: AssistantMessage): string =>
  m.content.map((c) => (c.type === 'thinking' ? c.thinking : '')).join('');
export const toolCallsOf = (m: AssistantMessage): ToolCall[] => m.content.filter((c): c is ToolCall => c.type === 'toolCall');

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
  const calls = toolCallsOf(message);
  expect(calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }))).toEqual(expectedGoogleCalls(entry, idPrefix));
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

