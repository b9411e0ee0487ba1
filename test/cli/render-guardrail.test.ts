import { describe, expect, it } from 'vitest';
import { TerminalRenderer } from '../../src/cli/render.js';

describe('TerminalRenderer and guardrails', () => {
  it('says which guardrail tripped, of which kind, and which call a tool guardrail turned down, on a line of its own', () => {
    let written = '';
    const renderer = new TerminalRenderer({ write: (text: string) => (written += text) }, { tty: false });
    renderer.event({ type: 'MessageUpdate', loopId: 'L1', message: {} as never, delta: { type: 'text', contentIndex: 0, delta: 'Let us solve' }, timestamp: 0 });
    renderer.event({ type: 'GuardrailTripped', loopId: 'L1', turnIndex: 0, guardrail: 'on-topic', kind: 'input', timestamp: 0 });
    renderer.event({ type: 'GuardrailTripped', loopId: 'L1', turnIndex: 1, guardrail: 'refund-limit', kind: 'toolInput', toolCallId: 'c7', timestamp: 0 });
    renderer.close();
    expect(written).toBe('Let us solve\n✗ guardrail on-topic tripped (input)\n✗ guardrail refund-limit tripped (toolInput, call c7)\n');
  });
});
