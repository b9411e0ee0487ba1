export * from './partial-message.js';
export * from './transcript-state.js';
export * from './transcript.js';
export * from './latest-per-frame.js';
