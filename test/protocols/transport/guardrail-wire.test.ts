/**
 * A run a parallel input guardrail stops mid-stream, through the places that read events: the wire
 * (encoder and rebuilder) and transcript(). The half-streamed answer is closed by the stop message.
 */
import { lastValueFrom, map, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { agentLoop, textOf, transcript, userMessage, type AgentEvent, type AgentLoopConfig } from '../../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../../src/testing/index.js';
import { createEventRebuilder, createWireEncoder } from '../../../src/protocols/transport/index.js';

/** The model streams a word every 10 ms; the guardrail trips once three words are out. */
function trippedRun(): AgentLoopConfig {
  let words = 0;
  const topic = {
    name: 'on-topic',
    check: () => new Promise<{ tripwire: boolean; info: string }>((resolve) => {
      const poll = setInterval(() => words >= 3 && (clearInterval(poll), resolve({ tripwire: true, info: 'homework' })), 2);
    }),
  };
  return {
    model: scriptedModel(), provider: scriptedProvider([{ text: 'one two three four five six seven', chunkSize: 4, chunkDelay: 10 }]), retry: false,
    guardrails: { input: [topic] },
    operators: { events: map((e: AgentEvent) => (e.type === 'MessageUpdate' && (words += 1), e)) },
  };
}

const context = () => ({ systemPrompt: '', messages: [], tools: [], agentId: 'a', sessionId: 's', loopId: 's.cfg.1' });

describe('a guardrail trip, as readers see it', () => {
  it('crosses the wire intact: GuardrailTripped as sent, AgentEnd with stoppedBy', async () => {
    const all = await lastValueFrom(agentLoop([userMessage('do my homework', 0)], context(), trippedRun()).pipe(toArray()));
    const encode = createWireEncoder();
    const rebuild = createEventRebuilder();
    const received: AgentEvent[] = all.map((e) => rebuild(JSON.parse(JSON.stringify(encode(e)))));
    expect(received.find((e) => e.type === 'GuardrailTripped')).toEqual(all.find((e) => e.type === 'GuardrailTripped'));
    const end = received.at(-1) as Extract<AgentEvent, { type: 'AgentEnd' }>;
    expect(end).toMatchObject({ type: 'AgentEnd', stopReason: 'guardRail', stoppedBy: { kind: 'guardrail', guardrail: 'on-topic', stage: 'input', info: 'homework' } });
  });

  it('transcript(): the half-streamed answer ends as the stop message, the one assistant message kept', async () => {
    const views = await lastValueFrom(agentLoop([userMessage('do my homework', 0)], context(), trippedRun()).pipe(transcript(), toArray()));
    expect(views.some((v) => v.streaming !== undefined && textOf(v.streaming).startsWith('one'))).toBe(true);
    const last = views.at(-1)!;
    expect(last.messages.map((m) => (m.role === 'assistant' ? `${m.stopReason}:${textOf(m)}` : m.role))).toEqual(['user', 'guardRail:[Stopped by guardrail: on-topic]']);
    expect(last.status).toBe('ended');
  });
});
