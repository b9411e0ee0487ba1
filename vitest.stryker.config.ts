import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

// For Stryker's vitest runner (npm run mutate), which runs the tests in one worker thread of its own. As in the suite,
// test files share their imports (isolate: false): Stryker switches each mutant on at run time, so a module loaded once
// serves every mutant (static mutants, which would need a fresh load, are left out: stryker.config.mjs).
export default mergeConfig(base, defineConfig({ test: { isolate: false } }));
