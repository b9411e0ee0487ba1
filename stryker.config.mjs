// Mutation testing (StrykerJS with the vitest runner) of the safety-critical set: run it with `npm run mutate`
// (scripts/mutate.mjs), which names the files to mutate and the tests that reach them, group by group, and keeps the
// results in reports/mutation/ (Stryker's incremental reports, committed). See mutation.md and docs/testing.md.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  // Stryker's vitest config (vitest.stryker.config.ts); the test files come from scripts/mutate.mjs (--testFiles).
  vitest: { configFile: 'vitest.stryker.config.ts', related: false },
  // Each mutant runs only the tests that reached its code in the initial run.
  coverageAnalysis: 'perTest',
  // Mutants in module-level initializers ("static": a top-level const, an object literal evaluated on import) are not
  // switched on by Stryker 9's vitest runner here (they survived even with a fresh runner per mutant): left out rather
  // than reported as false survivors. Helpers are written as function declarations so their bodies are tested.
  ignoreStatic: true,
  // Two cores, and other work on the machine: one test runner.
  concurrency: 1,
  timeoutMS: 30_000,
  reporters: ['clear-text', 'progress-append-only'],
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  // The sandbox copy needs only what the tests read.
  ignorePatterns: ['dist', 'api-reference', 'bench', 'coverage', '.tmp', 'reports', '*.cpuprofile'],
  // Scores are checked per file by scripts/mutate.mjs (90% unless a floor is set there).
  thresholds: { high: 95, low: 90, break: null },
};
