/**
 * A run that falls back mid-message, through the places that read events: the wire (encoder and
 * rebuilder) and transcript(). The primary streams part of an answer, then fails; the fallback
 * answers; the MessageReset (reason `modelFallback`) makes the half-shown text disappear.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { agentLoop, transcript, userMessage, type AgentEvent, type AgentLoopConfig, type ModelConfig } from '../../../src/index.js';
import { ProviderError } from '../../../src/types/errors.js';
import { scriptedModel, scriptedProvider } from '../../../src/testing/index.js';
import { createEventRebuilder, createWireEncoder } from '../../../src/protocols/transport/index.js';
import { textOf, type AssistantMessage } from '../../../src/types/message.js';

const model = scriptedModel();
const backup: ModelConfig = { id: 'backup-model', api: 'scripted', provider: 'backup' };

function fallbackRun(): AgentLoopConfig {
  const primary = scriptedProvider([{ text: 'Half an answer that', errorAfter: 3, error: ProviderError.network('connection reset') }]);
  const fallback = scriptedProvider([{ text: 'The whole answer.' }]);
  return { model, provider: primary, models: [model, { model: backup, provider: fallback }], retry: false };
}

const context = () => ({ systemPrompt: '', messages: [], tools: [], agentId: 'a', sessionId: 's', loopId: 's.cfg.1' });

describe('a model fallback after partial output, as readers see it', () => {
  it('crosses the wire intact: ModelFallback as sent, the reset message and the final message rebuilt', async () => {
    const all = await lastValueFrom(agentLoop([userMessage('q', 0)], context(), fallbackRun()).pipe(toArray()));
    expect(all.filter((e) => ['ModelFallback', 'MessageReset', 'MessageStart'].includes(e.type)).map((e) => (e.type === 'MessageReset' ? `${e.type}:${e.reason}` : e.type))).toEqual([
      'MessageStart', 'MessageStart', 'ModelFallback', 'MessageReset:modelFallback', // the user's message, the primary's partial, then the switch
    ]);
    const encode = createWireEncoder();
    const rebuild = createEventRebuilder();
    const received: AgentEvent[] = all.map((e) => rebuild(JSON.parse(JSON.stringify(encode(e)))));
    expect(received.find((e) => e.type === 'ModelFallback')).toEqual(all.find((e) => e.type === 'ModelFallback'));
    const end = received.at(-1)!;
    expect(end.type).toBe('AgentEnd');
    const answer = (end as Extract<AgentEvent, { type: 'AgentEnd' }>).messages.at(-1) as AssistantMessage;
    expect(answer).toMatchObject({ provider: 'backup', stopReason: 'stop' });
    expect(textOf(answer)).toBe('The whole answer.');
    const lastUpdate = received.filter((e) => e.type === 'MessageUpdate').at(-1)!;
    expect(lastUpdate.type === 'MessageUpdate' && textOf(lastUpdate.message)).toBe('The whole answer.');
  });

  it('transcript(): the primary\'s half-streamed text is replaced by the fallback\'s, which is the one message kept', async () => {
    const views = await lastValueFrom(agentLoop([userMessage('q', 0)], context(), fallbackRun()).pipe(transcript(), toArray()));
    const streamed = views.map((v) => (v.streaming ? textOf(v.streaming) : undefined)).filter((t): t is string => t !== undefined);
    expect(streamed.some((t) => t.startsWith('Half'))).toBe(true);
    expect(streamed.at(-1)).toBe('The whole answer.');
    const last = views.at(-1)!;
    expect(last.messages.map((m) => (m.role === 'assistant' ? `${m.provider}:${textOf(m)}` : m.role))).toEqual(['user', 'backup:The whole answer.']);
    expect(last.status).toBe('ended');
  });
});
