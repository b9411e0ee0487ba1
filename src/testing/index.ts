export * from './scripted-provider.js';
export * from './marbles.js';
export * from './replay-provider.js';
export * from './store-contract.js';
export { assertDeepEqual, firstDifference } from './deep-equal.js';
