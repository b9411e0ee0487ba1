/** `phi-rx/session`: recording agent runs into sessions, querying them, and storing them. */
export * from './model.js';
export * from './queries.js';
export * from './recorder.js';
export * from './store.js';
export * from './file-store.js';
export * from './memory-store.js';
export { recordSession } from '../operators/record-session.js';
export type { AgentEventSink, RecordSessionOptions } from '../operators/record-session.js';
