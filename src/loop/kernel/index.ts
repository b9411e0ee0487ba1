// The loop's kernel: the state a run threads through its stages, how stages chain, and their shared helpers.
export * from './loop-state.js';
export { copyState, stateWith } from './state-with.js';
export * from './loop-stages.js';
export * from './ask-hook.js';
export * from './when-turn-due.js';
export { keptPerRun } from './kept-per-run.js';
