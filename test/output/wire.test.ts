import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentLoop, userMessage, type AgentEvent } from '../../src/index.js';
import { createEventRebuilder, createWireEncoder } from '../../src/protocols/transport/index.js';
import { agentEnd, config, context, events } from '../agent/helpers.js';

const Weather = z.object({ city: z.string(), celsius: z.number() });

/** The events as a remote client sees them: encoded, sent as JSON, rebuilt. */
function overTheWire(all: AgentEvent[]): AgentEvent[] {
  const encode = createWireEncoder();
  const rebuild = createEventRebuilder();
  return all.map((e) => rebuild(JSON.parse(JSON.stringify(encode(e)))));
}

describe('structured output over the transport', () => {
  it('AgentEnd.output and AgentEnd.outputError arrive as they were sent', async () => {
    const valid = await events(agentLoop([userMessage('w?', 0)], context([]), config([{ text: '{"city":"Oslo","celsius":-3}' }], { output: Weather })));
    expect(agentEnd(overTheWire(valid)).output).toEqual({ city: 'Oslo', celsius: -3 });
    const invalid = await events(agentLoop([userMessage('w?', 0)], context([]), config([{ text: 'cold' }, { text: 'very cold' }], { output: Weather })));
    const sent = agentEnd(invalid).outputError;
    expect(sent?.text).toBe('very cold');
    expect(agentEnd(overTheWire(invalid)).outputError).toEqual(sent);
  });
});
