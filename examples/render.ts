/**
 * Rendering agent events in a terminal: `npm run example examples/render.ts` renders a
 * scripted run (no key needed). The quickstart and live examples carry a shorter copy of `renderEvent`.
 */
import { pathToFileURL } from 'node:url';
import { tap } from 'rxjs';
import { agentLoop, runToEnd, userMessage, type AgentEvent } from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

/** Renders agent events live in a terminal: streamed text, tool calls, results. */
export function renderEvent(e: AgentEvent, write: (s: string) => void = (s) => process.stdout.write(s)): void {
  switch (e.type) {
    case 'TurnStart':
      write(`\n── turn ${e.turnIndex} (${e.triggeredBy}) ──\n`);
      return;
    case 'MessageStart':
      if (e.message.role === 'user') write(`you › ${e.message.content.map((c) => (c.type === 'text' ? c.text : '[image]')).join('')}\n`);
      if (e.message.role === 'assistant') write('agent › ');
      return;
    case 'MessageUpdate':
      if (e.delta.type === 'text') write(e.delta.delta);
      return;
    case 'MessageEnd':
      if (e.message.role === 'assistant') write('\n');
      return;
    case 'ToolExecutionStart':
      write(`  ⚙ ${e.toolName}(${JSON.stringify(e.args)})\n`);
      return;
    case 'ToolExecutionEnd':
      write(`  ${e.isError ? '✗' : '✓'} ${e.toolName} → ${e.result.content.map((c) => (c.type === 'text' ? c.text : '[image]')).join('')}\n`);
      return;
    case 'RetryScheduled':
      write(`  ↻ retry ${e.attempt} in ${e.delayMs}ms (${e.errorKind})\n`);
      return;
    case 'AgentEnd':
      write(`\n[done: ${e.stopReason}, ${e.messages.length} new messages, ${e.usage.totalTokens} tokens]\n`);
      return;
    default:
      return;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const provider = scriptedProvider([{ text: 'Hello! Every event of this run is rendered as it arrives.' }]);
  const run$ = agentLoop([userMessage('Say hello')], { systemPrompt: 'Be brief.', messages: [], tools: [] }, { model: scriptedModel(), provider });
  await runToEnd(run$.pipe(tap((event) => renderEvent(event))));
}
