import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

// For Stryker's vitest runner (npm run mutate), which runs the tests in one worker thread of its own: each test file
// gets a fresh module graph, so a mutant switched on for one file's tests does not linger in the next file.
export default mergeConfig(base, defineConfig({ test: { isolate: true } }));
