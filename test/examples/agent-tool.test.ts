import { describe, expect, it } from 'vitest';
import { agentToolDemo } from '../../examples/agent-tool.js';

describe('examples/agent-tool', () => {
  it('two specialists stream side by side into the orchestrator\'s stream; their runs sit under their calls', async () => {
    const lines = await agentToolDemo();
    expect(lines).toContain('[weather] {"city":"Paris","celsius":18}');
    expect(lines).toContain('weather → {"city":"Paris","celsius":18}'); // the structured output is the result
    expect(lines).toContain('packing → A light jacket and good shoes.');
    expect(lines.find((l) => l.startsWith('streamed side by side'))).toMatch(/^streamed side by side: true/);
    expect(lines.filter((l) => l.startsWith('transcript:'))).toEqual(['transcript: weather → child ended, 2 messages', 'transcript: packing → child ended, 2 messages']);
    expect(lines.at(-1)).toBe('› Paris will be 18°C: take a light jacket and good shoes.');
  });
});
