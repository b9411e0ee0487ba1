/** A tripped run as the other parts see it: the session saves it as tripped, the trace marks its span as failed by the guardrail. */
import { SpanStatusCode } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { agentLoop, userMessage, type AgentEvent } from '../../src/index.js';
import { getLoop, InMemorySessionStore, recordSession, SessionRecorder } from '../../src/session/index.js';
import { addTool, agentEnd, config, context, events } from '../agent/helpers.js';
import { otelHarness } from '../integrations/otel/helpers.js';

const harnesses: Array<ReturnType<typeof otelHarness>> = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.shutdown()));
});

describe('a guardrail trip, recorded and traced', () => {
  it('is saved as tripped (stop reason, stoppedBy, the event) and fails invoke_agent with error.type = the guardrail', async () => {
    const otel = otelHarness();
    harnesses.push(otel);
    const recorder = new SessionRecorder();
    const blocked = { name: 'no-pii', mode: 'blocking' as const, check: () => ({ tripwire: true, info: { field: 'iban' } }) };
    const all: AgentEvent[] = await events(
      agentLoop([userMessage('my IBAN is DE89…', 0)], context([addTool]), config([{ text: 'never sent' }], { guardrails: { input: [blocked] } }))
        .pipe(recordSession(recorder), otel.tracing.trace()),
    );
    expect(agentEnd(all).stopReason).toBe('guardRail');

    const store = new InMemorySessionStore();
    await store.save(recorder.getSession('session-1')!);
    const loop = getLoop(await store.load('session-1'), 'session-1.scripted.1')!;
    expect(loop).toMatchObject({ status: 'completed', stopReason: 'guardRail', stoppedBy: { kind: 'guardrail', guardrail: 'no-pii', stage: 'input', info: { field: 'iban' } } });
    expect(loop.events.find((e) => e.type === 'GuardrailTripped')).toEqual(all.find((e) => e.type === 'GuardrailTripped'));

    const span = otel.one('invoke_agent');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'input guardrail "no-pii" tripped' });
    expect(span.attributes['error.type']).toBe('no-pii');
    expect(span.attributes['phi_rx.stop_reason']).toBe('guardRail');
  });
});
