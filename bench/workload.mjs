// The loop-overhead workload shared by every contender (issue #7). Zero latency everywhere, so
// that what is measured is what the loop itself costs per streamed delta and per tool call.
//
// One agent plays K turns. On every turn but the last the model streams N text deltas of 4
// characters, then T tool calls whose JSON arguments arrive in 3 deltas each; every tool answers
// a short string at once. The last turn streams N deltas and stops.

/** `long`: one agent, a long conversation. `wide`: many agents at once, short conversations. */
export const PRESETS = {
  long: { agents: 1, turns: 50, deltas: 200, tools: 4 },
  wide: { agents: 500, turns: 5, deltas: 50, tools: 2 },
};

/** The four characters of every text delta. */
export const DELTA_TEXT = 'abcd';
/** Deltas each tool call's JSON arguments arrive in. */
export const ARG_CHUNKS = 3;
export const TOOL_NAME = 'lookup';
export const TOOL_DESCRIPTION = 'Looks a line up in a file.';
export const SYSTEM_PROMPT = 'You are a benchmark.';
export const PROMPT = 'Go.';

/** The arguments of tool call `index` on turn `turn`. */
export function toolArgs(turn, index) {
  return { path: `src/file-${turn}-${index}.ts`, line: turn * 10 + index };
}

/** What every tool answers. */
export function toolOutput(args) {
  return `ok ${args.path}:${args.line}`;
}

/** The text of one turn: N deltas of DELTA_TEXT. */
export function turnText(workload) {
  return DELTA_TEXT.repeat(workload.deltas);
}

/** Whether turn `turn` (0-based) ends with tool calls. */
export function hasTools(workload, turn) {
  return turn < workload.turns - 1 && workload.tools > 0;
}

/** The pieces a tool call's JSON arguments stream in (as phi-rx's scripted provider splits them). */
export function argPieces(json) {
  const size = Math.max(1, Math.ceil(json.length / ARG_CHUNKS));
  const out = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out;
}

/**
 * The model of turn `turn` as a real provider hands it over: an async generator that yields one
 * part at a time, each after an await (as a socket delivers chunks), never a synchronous burst.
 * Parts: `{ type: 'textDelta', delta }`, `{ type: 'toolStart', id, name }`, `{ type: 'argDelta', id,
 * delta }`. Every contender consumes this same generator, the floor with `for await`.
 */
export async function* modelParts(workload, turn, nextId) {
  const text = turnText(workload);
  for (let i = 0; i < text.length; i += 4) yield { type: 'textDelta', delta: text.slice(i, i + 4) };
  if (!hasTools(workload, turn)) return;
  for (let i = 0; i < workload.tools; i++) {
    const id = nextId();
    yield { type: 'toolStart', id, name: TOOL_NAME };
    for (const piece of argPieces(JSON.stringify(toolArgs(turn, i)))) yield { type: 'argDelta', id, delta: piece };
  }
}

/** The counts every contender must report for one run of `workload` (all agents). */
export function expectedCounts(workload) {
  const toolTurns = workload.tools > 0 ? workload.turns - 1 : 0;
  const calls = toolTurns * workload.tools;
  const argDeltas = calls === 0 ? 0 : countArgDeltas(workload);
  return {
    textDeltas: workload.agents * workload.turns * workload.deltas,
    argDeltas: workload.agents * argDeltas,
    toolExecutions: workload.agents * calls,
    toolResults: workload.agents * calls,
    executed: workload.agents * calls,
  };
}

function countArgDeltas(workload) {
  let n = 0;
  for (let turn = 0; turn < workload.turns - 1; turn++) {
    for (let i = 0; i < workload.tools; i++) n += argPieces(JSON.stringify(toolArgs(turn, i))).length;
  }
  return n;
}

/**
 * Counters a contender fills while it consumes its run: every event delivered to the consumer,
 * text and tool-argument deltas, tool-execution-end events and tool-result messages as the
 * consumer sees them, and `executed`, bumped by the tool itself (so a loop cannot report a run it
 * skipped).
 */
export function newCounts() {
  return { events: 0, textDeltas: 0, argDeltas: 0, toolExecutions: 0, toolResults: 0, executed: 0 };
}

/** Throws unless the consumer saw exactly the work the workload asks for. */
export function assertCounts(name, workload, counts) {
  const expected = expectedCounts(workload);
  const wrong = Object.entries(expected).filter(([key, value]) => counts[key] !== value);
  if (wrong.length > 0) {
    const detail = wrong.map(([key, value]) => `${key}: expected ${value}, got ${counts[key]}`).join('; ');
    throw new Error(`${name}: the run did not do the whole workload (${detail})`);
  }
}

/** Starts `workload.agents` runs of `runAgent()` at once, waits for all of them, and returns `counts`. */
export async function runAgents(workload, counts, runAgent) {
  const runs = [];
  for (let i = 0; i < workload.agents; i++) runs.push(runAgent());
  await Promise.all(runs);
  return counts;
}
