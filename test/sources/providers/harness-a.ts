/**
 * Helpers for the provider tests of part A (Anthropic, Chat Completions, Azure): build requests,
 * run a Provider to the end checking the shape of its stream, and read cassettes.
 */
import { lastValueFrom, tap, toArray } from 'rxjs';
import type { Observable } from 'rxjs';
import { expect } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { ModelConfig, Provider, ProviderOptions, StreamEvent, StreamRequest } from '../../../src/types/provider.js';
import type { AssistantMessage } from '../../../src/types/message.js';
import type { ToolDefinition } from '../../../src/types/tool.js';
import { textOf } from '../../../src/types/message.js';
import { DEFAULT_CACHE_CONFIG } from '../../../src/types/config.js';
import { ProviderError } from '../../../src/types/errors.js';
import { readCassette } from './fixture-server.js';
import type { ManifestEntry } from './fixture-server.js';

export const TEST_KEY = 'sk-test-0123456789abcdefghijklmnop';

export function streamRequest(model: ModelConfig, overrides: Partial<StreamRequest> = {}): StreamRequest {
  return {
    model: { ...model, apiKey: model.apiKey ?? TEST_KEY },
    systemPrompt: 'You are a helpful assistant',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }], timestamp: 0 }],
    tools: [],
    thinkingLevel: 'off',
    cacheConfig: { enabled: false, strategy: { kind: 'disabled' } },
    ...overrides,
  };
}

export const defaultCache = DEFAULT_CACHE_CONFIG;

export const weatherTool: ToolDefinition = {
  name: 'weather',
  description: 'Get weather information for a location',
  parameters: { type: 'object', properties: { location: { type: 'string', description: 'the city' } }, required: ['location'] },
};

export interface RunResult {
  events: StreamEvent[];
  message: AssistantMessage;
}

/** Runs a provider to completion; checks start first, exactly one done last, and that the deltas tell the same story as the message. */
export async function runProvider(provider: Provider, request: StreamRequest, options: ProviderOptions = {}): Promise<RunResult> {
  const events = await lastValueFrom(provider(request, options).pipe(toArray()));
  expect(events[0]?.type).toBe('start');
  expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
  const last = events[events.length - 1]!;
  if (last.type !== 'done') throw new Error(`last event is ${last.type}, not done`);
  const streamedText = events.flatMap((e) => (e.type === 'textDelta' ? [e.delta] : [])).join('');
  expect(streamedText).toBe(textOf(last.message));
  const streamedThinking = events.flatMap((e) => (e.type === 'thinkingDelta' ? [e.delta] : [])).join('');
  expect(streamedThinking).toBe(thinkingOf(last.message));
  return { events, message: last.message };
}

/** Runs a stream that must fail; returns its ProviderError. */
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

export function thinkingOf(message: AssistantMessage): string {
  return message.content.flatMap((c) => (c.type === 'thinking' && !c.redacted ? [c.thinking] : [])).join('');
}

export function toolCallsOf(message: AssistantMessage) {
  return message.content.flatMap((c) => (c.type === 'toolCall' ? [{ id: c.id, name: c.name, arguments: c.arguments }] : []));
}

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
  const user = messages.find((m) => m.role === 'user');
  if (!user) return '';
  if (typeof user.content === 'string') return user.content;
  return (user.content as Array<{ type: string; text?: string }>).flatMap((c) => (c.text ? [c.text] : [])).join('');
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
