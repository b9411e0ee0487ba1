/**
 * A loop of your own from the exported stages (README, "Compose your own loop"): the state is one
 * immutable value handed from stage to stage, and every stage is an operator you can replace,
 * drop or insert. Compared with `agentLoop`, this loop
 * - replaces `compactContext` with its own summariser (older turns become one summary message),
 * - drops steering (no `injectQueued` stage: nothing can be queued),
 * - guards one tool in the tool stage: a call to it is answered with a result saying it was not run
 *   (the assistant message is final at its MessageEnd, which the model call emits: a guard after
 *   the call does not edit it, it answers the call).
 * No mutable outer variables, no write-back callbacks: what a stage learns travels in the state.
 *
 *   npx tsx examples/own-loop.ts
 */
import { pathToFileURL } from 'node:url';
import { lastValueFrom, map, type Observable, of, toArray } from 'rxjs';
import { z } from 'zod';
import {
  buildRequest, callModel, defineTool, endTurn, isLoopState, loopStages, loopState, repeatTurns, runToolCalls, startTurn, stateWith, textOf,
  userMessage, type AgentEvent, type AgentMessage, type LoopStage, type LoopState, type PreDispatchPolicy,
} from 'phi-rx';
import { describeEvent, scriptedModel, scriptedProvider } from 'phi-rx/testing';

const notes = new Map([['groceries', 'milk, eggs, bread']]);
const readNote = defineTool({
  name: 'read_note',
  description: 'Reads a note',
  parameters: z.object({ id: z.string() }),
  execute: ({ id }) => notes.get(id) ?? `no note ${id}`,
});
const deleteNote = defineTool({
  name: 'delete_note',
  description: 'Deletes a note',
  parameters: z.object({ id: z.string() }),
  execute: ({ id }) => (notes.delete(id) ? `deleted ${id}` : `no note ${id}`),
});
const tools = [readNote, deleteNote];

/** Our compaction: everything before the latest user prompt becomes one summary message. */
export function summariseOlderTurns(): LoopStage {
  return map((state: LoopState) => {
    let last = -1;
    state.messages.forEach((m, i) => {
      if (m.role === 'user') last = i;
    });
    if (last <= 0) return state;
    const older = state.messages.slice(0, last);
    const gist = older.map((m) => (m.role === 'user' || m.role === 'assistant' ? textOf(m) : '')).filter(Boolean).join(' / ');
    const summary: AgentMessage = userMessage(`[Summary of ${older.length} earlier messages: ${gist}]`, 0);
    return stateWith(state, { messages: [summary, ...state.messages.slice(last)] });
  });
}

/** A guard: a call to `tool` is not run; its result tells the model so (the UI shows the call and that result). */
export function vetoTool(tool: string): PreDispatchPolicy {
  return (call) => (call.name === tool ? { action: 'skip', reason: `[${tool} is not allowed here; the call was not run.]` } : undefined);
}

/** The loop: one turn is a chain of stages, repeated while there is something to answer. */
export function ownLoop(prompt: string): Observable<AgentEvent | LoopState> {
  const provider = scriptedProvider([
    { text: 'Reading it, then cleaning up.', toolCalls: [{ name: 'read_note', arguments: { id: 'groceries' } }, { name: 'delete_note', arguments: { id: 'groceries' } }] },
    { text: 'Your list: milk, eggs, bread. I left the note in place.' },
  ]);
  const turn = loopStages(
    startTurn(),
    summariseOlderTurns(),
    buildRequest({ model: scriptedModel(), systemPrompt: 'You manage notes.', tools }),
    callModel({ provider }),
    runToolCalls({ tools, preDispatch: [vetoTool('delete_note')] }),
    endTurn(),
  );
  const history = [userMessage('Hi! Keep my notes tidy.', 1), userMessage('And be brief.', 2)];
  return of(loopState('own-loop.1', history, [userMessage(prompt, 3)])).pipe(repeatTurns(turn));
}

/** Prints the events of a run, one per line (text deltas left out), and returns the final state. */
export async function main(print: (line: string) => void = console.log): Promise<LoopState> {
  const outputs = await lastValueFrom(ownLoop('What is on my grocery list?').pipe(toArray()));
  for (const e of outputs.filter((o): o is AgentEvent => !isLoopState(o))) {
    if (e.type !== 'MessageUpdate') print(describeEvent(e));
  }
  const final = outputs.filter(isLoopState).at(-1)!;
  print(`final: ${final.messages.length} messages, turn ${final.turnIndex}, note still there: ${notes.has('groceries')}`);
  return final;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main();
}
