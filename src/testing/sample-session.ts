import type { Session } from '../session/model.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/**
 * A small session with every kind of field a store must keep: two loops (the second continuing
 * the first as a branch), thinking with a signature, tool calls and results, images in a user
 * message and in a tool result, tool-result details, an assistant error message, an extension
 * message, usage with cache reads and writes, turn ids, metadata, recorded events, a
 * continuation link, sub-agent links both ways (`childLoopRefs`, `parentSpawnRef`) and a
 * parallel group. `tag` varies the content in every loop, so two tags differ everywhere.
 *
 * @example
 * await store.save(sampleSession('s-1', 'agent-a'));
 * expect(await store.load('s-1')).toEqual(sampleSession('s-1', 'agent-a'));
 */
export function sampleSession(sessionId: string, agentId: string, tag = 'first'): Session {
  const loop1 = `${sessionId}.default.1`;
  const loop2 = `${sessionId}.default.2`;
  const usage = { input: 12, output: 7, reasoning: 2, cacheRead: 3, cacheWrite: 5, totalTokens: 29 };
  return {
    version: 1,
    sessionId,
    agentId,
    createdAt: 1_000,
    lastActiveAt: 1_900,
    formation: { kind: 'firstLoop', timestamp: 1_000 },
    parentSpawnRef: { parentSessionId: `parent-of-${sessionId}`, parentLoopId: 'parent.default.1', toolCallId: 'call_p', toolName: 'delegate' },
    loops: [
      {
        loopId: loop1,
        sessionId,
        agentId,
        startedAt: 1_000,
        endedAt: 1_500,
        status: 'completed',
        stopReason: 'stop',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: `What is 2+2? (${tag})` },
              { type: 'image', data: PNG, mimeType: 'image/png' },
            ],
            timestamp: 1_001,
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: `Add them (${tag}).`, signature: 'sig-1' },
              { type: 'toolCall', id: 'call_1', name: 'add', arguments: { a: 2, b: 2, note: tag } },
            ],
            stopReason: 'toolUse',
            model: 'm',
            provider: 'p',
            usage,
            timestamp: 1_100,
            turnId: { loopId: loop1, turnIndex: 0 },
          },
          {
            role: 'toolResult',
            toolCallId: 'call_1',
            toolName: 'add',
            content: [
              { type: 'text', text: `4 (${tag})` },
              { type: 'image', data: PNG, mimeType: 'image/png' },
            ],
            isError: false,
            timestamp: 1_200,
            details: { exitCode: 0, tag },
          },
          { role: 'assistant', content: [{ type: 'text', text: `It is 4. (${tag})` }], stopReason: 'stop', model: 'm', provider: 'p', usage, timestamp: 1_300 },
        ],
        usage: { input: 24, output: 14, reasoning: 4, cacheRead: 6, cacheWrite: 10, totalTokens: 58 },
        metadata: { note: tag },
        events: [
          { type: 'AgentStart', agentId, sessionId, loopId: loop1, timestamp: 1_000 },
          { type: 'TurnStart', loopId: loop1, turnIndex: 0, timestamp: 1_001, triggeredBy: 'user' },
          { type: 'ToolExecutionEnd', loopId: loop1, toolCallId: 'call_1', toolName: 'add', isError: false, timestamp: 1_200, childLoopId: 'sub.sub.1', childSessionId: 'sub', result: { content: [{ type: 'text', text: tag }] } },
        ] as Session['loops'][number]['events'],
        childrenLoopIds: [loop2],
        childLoopRefs: [{ toolCallId: 'call_1', toolName: 'add', childLoopId: 'sub.sub.1', childSessionId: 'sub' }],
      },
      {
        loopId: loop2,
        sessionId,
        agentId,
        parentLoopId: loop1,
        continuationKind: { kind: 'branch', tag: '2026-01-01T00:00:00Z' },
        startedAt: 1_600,
        endedAt: 1_900,
        status: 'completed',
        stopReason: 'error',
        rejection: `blocked by filter (${tag})`,
        messages: [
          { role: 'extension', kind: 'note', data: { tag, nested: { list: [1, 'two', null] } }, timestamp: 1_650 },
          {
            role: 'assistant',
            content: [],
            stopReason: 'error',
            model: 'm',
            provider: 'p',
            usage: { input: 3, output: 0, reasoning: 0, cacheRead: 1, cacheWrite: 2, totalTokens: 6 },
            timestamp: 1_700,
            errorMessage: `529 overloaded (${tag})`,
          },
        ],
        usage: { input: 3, output: 0, reasoning: 0, cacheRead: 1, cacheWrite: 2, totalTokens: 6 },
        events: [],
        childrenLoopIds: [],
        childLoopRefs: [],
        parallelGroup: {
          allLoopIds: [loop2, `${sessionId}.other.1`],
          selectedLoopId: loop2,
          selectedConfigIndex: 0,
          evaluationUsage: { input: 1, output: 1, reasoning: 0, cacheRead: 1, cacheWrite: 1, totalTokens: 4 },
          isSelected: true,
        },
      },
    ],
  };
}
