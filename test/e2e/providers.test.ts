/**
 * End to end, per wire protocol: `agentLoop` with a real zod tool and a ModelConfig from the
 * public constructors, routed by the default provider registry (no `provider` override) to the
 * real provider, over real sockets to a loopback server that speaks the protocol. Two tool turns,
 * then a final answer; the server checks every request (see turn-server.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { agentLoop, defineTool, userMessage } from '../../src/index.js';
import type { AgentEvent, AgentEndEvent, EventOf } from '../../src/types/events.js';
import type { AssistantMessage } from '../../src/types/message.js';
import type { ModelConfig } from '../../src/types/provider.js';
import { Usage } from '../../src/types/usage.js';
import { expectAllResponsesEnded, startFixtureServer } from '../providers/fixture-server.js';
import type { FixtureServer } from '../providers/fixture-server.js';
import { startTurnServer } from './turn-server.js';
import type { TurnServer } from './turn-server.js';
import { WIRE_PROTOCOLS, expectedUsage } from './wire-protocols.js';
import type { ScriptedTurn } from './wire-protocols.js';

const SYSTEM = 'You are a concise travel assistant. Use the weather tool for facts.';
const PROMPT = 'Which is warmer today, Paris or Rome?';
const TEMPERATURES: Record<string, number> = { Paris: 18, Rome: 24 };

const SCRIPT: ScriptedTurn[] = [
  { text: 'Let me check Paris first.', toolCall: { id: 'paris01', name: 'weather', arguments: { city: 'Paris' } }, usage: { input: 120, output: 18, cacheRead: 0 } },
  { text: 'Now Rome.', toolCall: { id: 'rome02', name: 'weather', arguments: { city: 'Rome' } }, usage: { input: 41, output: 15, cacheRead: 100 } },
  { text: 'Rome is warmer: 24°C against 18°C in Paris — pack light.', usage: { input: 37, output: 22, cacheRead: 150 } },
];
const TOOL_OUTPUTS = { paris01: 'Paris: 18°C, clear', rome02: 'Rome: 24°C, clear' };

const weather = defineTool({
  name: 'weather',
  description: 'Current weather for a city',
  parameters: z.object({ city: z.string().describe('City name, e.g. "Paris"') }),
  execute: ({ city }) => `${city}: ${TEMPERATURES[city] ?? '?'}°C, clear`,
});

const run = (model: ModelConfig): Promise<AgentEvent[]> =>
  lastValueFrom(agentLoop([userMessage(PROMPT)], { systemPrompt: SYSTEM, messages: [], tools: [weather] }, { model }).pipe(toArray()));

const ofType = <T extends AgentEvent['type']>(events: AgentEvent[], type: T): Array<EventOf<T>> =>
  events.filter((e): e is EventOf<T> => e.type === type);

/** The lifecycle of one tool turn, MessageUpdate left out (how many there are depends on chunking). */
const toolTurn = [
  'TurnStart',
  'MessageStart', 'MessageEnd', // assistant
  'ToolExecutionStart', 'ToolExecutionEnd',
  'MessageStart', 'MessageEnd', // tool result
  'TurnEnd',
];

let servers: Array<TurnServer | FixtureServer> = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

describe.each(WIRE_PROTOCOLS.map((wire) => [wire.label, wire] as const))('agentLoop end to end over %s', (_label, wire) => {
  it('runs two tool turns and a final answer through the real provider', async () => {
    const server = await startTurnServer(wire, SCRIPT, { system: SYSTEM, tools: ['weather'], toolOutputs: TOOL_OUTPUTS });
    servers.push(server);
    const model = wire.model(server.url);
    expect(model.api).toBe(wire.api);

    const events = await run(model);

    expect(server.problems).toEqual([]);
    expect(server.server.requests).toHaveLength(3);
    expect(events.map((e) => e.type).filter((t) => t !== 'MessageUpdate')).toEqual([
      'AgentStart',
      'TurnStart', 'MessageStart', 'MessageEnd', // the prompt
      'MessageStart', 'MessageEnd', 'ToolExecutionStart', 'ToolExecutionEnd', 'MessageStart', 'MessageEnd', 'TurnEnd',
      ...toolTurn,
      'TurnStart', 'MessageStart', 'MessageEnd', 'TurnEnd',
      'AgentEnd',
    ]);

    // The tools ran with the arguments the model streamed, under the protocol's call ids.
    const starts = ofType(events, 'ToolExecutionStart');
    expect(starts.map((s) => s.args)).toEqual([{ city: 'Paris' }, { city: 'Rome' }]);
    const ids = SCRIPT.flatMap((t) => (t.toolCall ? [wire.callId(t.toolCall.id)] : []));
    if (ids.every((id) => id !== undefined)) expect(starts.map((s) => s.toolCallId)).toEqual(ids);
    // Ids the provider invents (Gemini 2.x sends none) must not repeat across turns either: the
    // conversation may move to a provider that requires unique ids.
    expect(new Set(starts.map((s) => s.toolCallId)).size).toBe(2);
    const ends = ofType(events, 'ToolExecutionEnd');
    expect(ends.map((e) => [e.isError, e.result.content])).toEqual([
      [false, [{ type: 'text', text: TOOL_OUTPUTS.paris01 }]],
      [false, [{ type: 'text', text: TOOL_OUTPUTS.rome02 }]],
    ]);

    // Each turn's usage as the protocol reported it, and their sum on AgentEnd.
    expect(ofType(events, 'TurnEnd').map((t) => t.usage)).toEqual(SCRIPT.map(expectedUsage));
    const end = events.at(-1) as AgentEndEvent;
    expect(end.stopReason).toBe('stop');
    expect(end.usage).toEqual(SCRIPT.map(expectedUsage).reduce(Usage.combine, Usage.empty()));

    // The final answer, whole on the message and piece by piece in the updates.
    const final = end.messages.at(-1) as AssistantMessage;
    expect(final.role).toBe('assistant');
    expect(final.content).toEqual([{ type: 'text', text: SCRIPT[2]!.text }]);
    expect(final.stopReason).toBe('stop');
    expect(final.provider).toBe(model.provider);
    const lastTurn = events.slice(events.findLastIndex((e) => e.type === 'TurnStart'));
    const streamed = ofType(lastTurn, 'MessageUpdate').flatMap((u) => (u.delta.type === 'text' ? [u.delta.delta] : [])).join('');
    expect(streamed).toBe(SCRIPT[2]!.text);
    // Snapshots: the assistant's MessageStart shows no content yet, and each update shows the text so far.
    const assistantStart = ofType(lastTurn, 'MessageStart').find((m) => m.message.role === 'assistant')!;
    expect((assistantStart.message as AssistantMessage).content).toEqual([]);
    let soFar = '';
    for (const u of ofType(lastTurn, 'MessageUpdate')) {
      if (u.delta.type !== 'text') continue;
      soFar += u.delta.delta;
      expect(u.message.content).toEqual([{ type: 'text', text: soFar }]);
    }
    expect(end.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'toolResult', 'assistant']);

    await expectAllResponsesEnded(server.server);
  });
});

describe('agentLoop end to end: a rate limit with retry-after', () => {
  const answer: ScriptedTurn = { text: 'Sunny in Rome, 24°C.', usage: { input: 12, output: 7, cacheRead: 0 } };

  it.each(WIRE_PROTOCOLS.map((wire) => [wire.label, wire] as const))('%s: waits retry-after-ms, retries, ends normally', async (_label, wire) => {
    const server = await startFixtureServer();
    servers.push(server);
    server.enqueue(
      { status: 429, headers: { 'retry-after-ms': '50' }, body: JSON.stringify({ error: { type: 'rate_limit_error', message: 'Rate limited, slow down' } }) },
      wire.respond(answer),
    );

    const events = await lastValueFrom(
      agentLoop([userMessage('Weather in Rome?')], { systemPrompt: SYSTEM, messages: [], tools: [] }, { model: wire.model(server.url) }).pipe(toArray()),
    );

    const retries = ofType(events, 'RetryScheduled');
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ attempt: 1, delayMs: 50, errorKind: 'rateLimited' });
    expect(retries[0]!.errorMessage).toContain('Rate limited, slow down');
    expect(retries[0]!.errorMessage).not.toContain('e2e-fake-key');
    // The retry waited for the server's delay before the answer streamed.
    const answered = ofType(events, 'MessageStart').find((e) => e.message.role === 'assistant')!;
    expect(answered.timestamp - retries[0]!.timestamp).toBeGreaterThanOrEqual(45);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.body).toBe(server.requests[0]!.body);
    const end = events.at(-1) as AgentEndEvent;
    expect(end.stopReason).toBe('stop');
    expect(end.usage).toEqual(expectedUsage(answer));
    expect(end.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });
});
