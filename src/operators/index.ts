export * from './retry-backoff.js';
export * from './filter-input.js';
export * from './compact.js';
export * from './limit-execution.js';
export * from './to-message-events.js';
export * from './dispatch-tools.js';
export * from './guard-provider-stream.js';
export * from './resume-retry.js';
