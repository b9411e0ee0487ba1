import { describe, expect, it } from 'vitest';
import { main } from '../../examples/tracing.js';

describe('examples/tracing', () => {
  it('prints the span tree, the sub-agent nested under its tool call', async () => {
    let out = '';
    const spans = await main((s) => (out += s));
    expect(out.split('\n').filter(Boolean)).toEqual([
      'invoke_agent coordinator',
      '  chat coordinator-model',
      '  execute_tool researcher',
      '    invoke_agent researcher',
      '      chat researcher-model',
      '      execute_tool population',
      '      chat researcher-model',
      '  chat coordinator-model',
    ]);
    expect(spans.find((s) => s.name === 'execute_tool population')!.attributes).toMatchObject({ 'gen_ai.tool.name': 'population' });
  });
});
