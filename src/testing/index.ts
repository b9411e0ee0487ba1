export * from './scripted-provider.js';
export * from './marbles.js';
