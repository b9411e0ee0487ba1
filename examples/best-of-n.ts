/**
 * Best-of-N: three configs answer the same question in parallel, a judge model picks the best
 * answer, and the conversation continues from the winner. Runs offline on the scripted provider;
 * swap the `provider`s for real models (or drop them to use the registry) to do it for real.
 *
 *   npm run example examples/best-of-n.ts
 */
import { lastValueFrom, tap } from 'rxjs';
import { pathToFileURL } from 'node:url';
import {
  agentLoopParallel, Evaluation, parallelResult, userMessage, type AgentContext, type AgentEvent, type AgentLoopConfig, type ParallelResult,
} from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

/** A branch: in real use, a different model, temperature or system of tools. */
function contender(configId: string, answer: string): AgentLoopConfig {
  return { model: scriptedModel(`${configId}-model`), configId, provider: scriptedProvider([{ text: answer, chunkSize: 12 }]) };
}

export async function main(log: (line: string) => void = console.log): Promise<ParallelResult> {
  const context: AgentContext = {
    systemPrompt: 'You are a helpful assistant.',
    messages: [],
    tools: [],
    agentId: 'example-agent',
    sessionId: 'best-of-n',
  };
  const configs = [
    contender('terse', 'Use a Map.'),
    contender('thorough', 'Use a Map keyed by id: lookups are O(1), insertion order is kept, and any value can be a key.'),
    contender('rambling', 'Well, there are many data structures, and arrays are nice, and so are objects, and...'),
  ];
  // The judge answers with the number of the best response; here it is scripted to say "2".
  const judge = Evaluation.LlmJudge({ judge: { model: scriptedModel('judge'), provider: scriptedProvider([{ text: '2' }]) } });

  const show = (e: AgentEvent): void => {
    if (e.type === 'ParallelLoopStart') log(`started ${e.loopIds.length} branches: ${e.loopIds.join(', ')}`);
    else if (e.type === 'AgentEnd') log(`  ${e.loopId} finished (${e.stopReason}, ${e.usage.totalTokens} tokens)`);
    else if (e.type === 'ProgressMessage' && e.toolName === 'evaluateParallel') log(`  warning: ${e.text}`);
    else if (e.type === 'ParallelLoopEnd') log(`selected ${e.selectedLoopId} (judge used ${e.evaluationUsage.totalTokens} tokens)`);
  };

  const question = userMessage('How should I store users for fast lookup by id?');
  const result = await lastValueFrom(agentLoopParallel([question], context, configs, judge).pipe(tap(show), parallelResult()));

  const answer = result.selectedContext.messages.at(-1);
  log(`winner says: ${answer?.role === 'assistant' ? answer.content.map((c) => (c.type === 'text' ? c.text : '')).join('') : '(nothing)'}`);
  log(`the conversation now has ${result.selectedContext.messages.length} messages and continues from ${result.selected.loopId}`);
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
