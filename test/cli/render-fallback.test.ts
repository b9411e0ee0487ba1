import { describe, expect, it } from 'vitest';
import { TerminalRenderer } from '../../src/cli/render.js';
import type { AgentEvent } from '../../src/index.js';

const fallback: AgentEvent = {
  type: 'ModelFallback', loopId: 'L1', turnIndex: 0, from: { provider: 'openai', id: 'gpt-4o' }, to: { provider: 'anthropic', id: 'claude-sonnet-4-5' },
  reason: 'retriesExhausted', errorMessage: 'network: HTTP 503', timestamp: 0,
};

describe('TerminalRenderer', () => {
  it('says which model gave up, why, and which one takes over, on a line of its own', () => {
    let written = '';
    const renderer = new TerminalRenderer({ write: (text: string) => (written += text) }, { tty: false });
    renderer.event({ type: 'MessageUpdate', loopId: 'L1', message: {} as never, delta: { type: 'text', contentIndex: 0, delta: 'Half a' }, timestamp: 0 });
    renderer.event(fallback);
    renderer.close();
    expect(written).toBe('Half a\n⇢ openai/gpt-4o gave up (network: HTTP 503); anthropic/claude-sonnet-4-5 takes over\n');
  });
});
