import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { main } from '../../examples/quickstart.js';
import { miniLoop, withRedaction } from '../../examples/custom-operator.js';

describe('examples', () => {
  it('quickstart: two tool calls, a steering message and a follow-up, rendered live', async () => {
    let out = '';
    // `scripted: true`: the same run whatever API keys this machine has set.
    const end = await main({ chunkDelayMs: 0, write: (s) => (out += s), scripted: true });
    expect(end.stopReason).toBe('stop');
    expect(end.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'user', 'assistant', 'toolResult', 'assistant', 'user', 'assistant']);
    expect(out).toContain('⚙ weather({"city":"Paris"})');
    expect(out).toContain('you › Also compare with Rome, please.');
    expect(out).toContain('you › One more thing: what should I pack?');
    expect(out).toContain('agent › Pack a light jacket for Paris evenings.');
  });

  it('quickstart: PHI_RX_SCRIPTED keeps the scripted demo even when a key is set', async () => {
    let out = '';
    const end = await main({ chunkDelayMs: 0, write: (s) => (out += s), env: { ANTHROPIC_API_KEY: 'sk-ant-not-used', PHI_RX_SCRIPTED: '1' } });
    expect(end.stopReason).toBe('stop');
    expect(out).not.toContain('Using anthropic');
    expect(out).toContain('agent › Pack a light jacket for Paris evenings.');
  });

  it('custom-operator: a redaction stage in the loop, and a loop assembled from the exported operators', async () => {
    expect(await withRedaction()).toEqual(['customer 42: Ada Lovelace, card [card], [email]']);
    const events = await lastValueFrom(miniLoop('Find customer 7').pipe(toArray()));
    expect(events.map((e) => e.type).filter((t) => t !== 'MessageUpdate')).toEqual([
      'MessageStart', 'MessageEnd', 'ToolExecutionStart', 'ToolExecutionEnd', 'MessageStart', 'MessageEnd',
    ]);
    expect(events.find((e) => e.type === 'ToolExecutionEnd')).toMatchObject({ result: { content: [{ text: expect.stringContaining('[card]') }] } });
  });
});
