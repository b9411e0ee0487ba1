export * from './tokens.js';
export * from './compaction.js';
export * from './execution.js';
