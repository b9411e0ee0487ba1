import { readFile } from 'node:fs/promises';
import { interval, map, take, concat, of, type Observable } from 'rxjs';
import { z } from 'zod';
import { defineTool } from '../tools/define-tool.js';
import { scriptedProvider, type ScriptedProvider, type ScriptedTurn, type ScriptStep } from '../testing/scripted-provider.js';
import { ProviderError, type ProviderErrorKind } from '../types/errors.js';
import { textOf, type ToolResultMessage } from '../types/message.js';
import { toolProgress, type ToolEmission } from '../types/tool.js';

/** A demo tool that counts words slowly, reporting progress, so the terminal shows a live tool call. */
export const countWordsTool = defineTool({
  name: 'count_words',
  description: 'Counts the words of a text',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }): Observable<ToolEmission | string> => {
    const words = text.split(/\s+/).filter(Boolean);
    const steps = Math.max(1, Math.min(words.length, 5));
    return concat(
      interval(150).pipe(take(steps), map((i) => toolProgress(`counted ${Math.round(((i + 1) / steps) * words.length)} of ${words.length} words`))),
      of(String(words.length)),
    );
  },
});

/** What the CLI runs when there is no model key: a scripted conversation around `count_words`. */
export function demoProvider(prompt: string): ScriptedProvider {
  const answer: ScriptStep = (request) => {
    const result = [...request.messages].reverse().find((m): m is ToolResultMessage => m.role === 'toolResult');
    return { text: `Your prompt has ${result ? textOf(result) : 'an unknown number of'} words.`, chunkDelay: 20, usage: { input: 60, output: 9 } };
  };
  return scriptedProvider([
    { text: 'No model key, so this is the scripted demo. Let me count the words of your prompt.', chunkDelay: 20, toolCalls: [{ name: 'count_words', arguments: { text: prompt } }], usage: { input: 40, output: 25 } },
    answer,
  ]);
}

const ScriptFile = z.array(
  z.strictObject({
    text: z.string().optional(),
    thinking: z.string().optional(),
    toolCalls: z.array(z.strictObject({ name: z.string(), arguments: z.record(z.string(), z.unknown()).optional(), id: z.string().optional() })).optional(),
    usage: z.strictObject({ input: z.number().optional(), output: z.number().optional() }).optional(),
    error: z.strictObject({ kind: z.enum(['rateLimited', 'network', 'auth', 'api', 'contextOverflow', 'other']), message: z.string() }).optional(),
    delay: z.number().optional(),
    chunkDelay: z.number().optional(),
  }),
);

/** A scripted provider from a JSON file of turns (`--script`): demos and tests of the CLI itself. */
export async function scriptFromFile(file: string): Promise<ScriptedProvider> {
  const parsed = ScriptFile.safeParse(JSON.parse(await readFile(file, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${file}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return scriptedProvider(
    parsed.data.map(({ error, ...turn }): ScriptedTurn => ({
      ...(turn as ScriptedTurn),
      ...(error ? { error: new ProviderError(error.kind as ProviderErrorKind, error.message) } : {}),
    })),
  );
}
