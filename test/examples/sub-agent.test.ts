import { describe, expect, it } from 'vitest';
import { main } from '../../examples/sub-agent.js';

describe('examples/sub-agent', () => {
  it('delegates to a child loop, streams its text, and the recorder links the two sessions', async () => {
    let out = '';
    const { parent, sessions } = await main((s) => (out += s));
    const end = parent.find((e) => e.type === 'ToolExecutionEnd')!;
    expect(end).toMatchObject({ isError: false, result: { content: [{ text: 'Tokyo has 37.4 million people, Delhi 32.9 million.' }] } });
    expect(out).toContain('coordinator › Tokyo is larger');
    expect(sessions).toHaveLength(2);
    const [first, second] = sessions;
    const parentSession = [first!, second!].find((s) => s.loops.some((l) => (l.childLoopRefs ?? []).length > 0))!;
    const childSession = [first!, second!].find((s) => s !== parentSession)!;
    const childLoopId = (end as { childLoopId: string }).childLoopId;
    expect(childSession.loops[0]!.loopId).toBe(childLoopId);
    expect(JSON.stringify(parentSession.loops[0]!.childLoopRefs)).toContain(childLoopId);
    expect(JSON.stringify(childSession)).toContain(parentSession.loops[0]!.loopId);
  });
});
