import { describe, expect, it } from 'vitest';
import { main } from '../../examples/mcp.js';

describe('examples/mcp.ts', () => {
  it('lists the reference server tools, echoes, and shows progress', async () => {
    const out = await main();
    expect(out.tools).toContain('everything__echo');
    expect(out.echo).toBe('Echo: hello from phi-rx');
    expect(out.progress).toEqual(['progress 1/3', 'progress 2/3', 'progress 3/3']);
  });
});
