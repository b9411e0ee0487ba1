import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Examples and tests that import `phi-rx` (package self-reference) get src/, not dist/: each export's
// `phi-rx-source` condition in package.json, as an alias (tsx and tsc use the condition itself).
const exportsMap = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).exports as Record<string, string | Record<string, string>>;
const alias = Object.entries(exportsMap).flatMap(([subpath, target]) =>
  typeof target === 'object' && target['phi-rx-source']
    ? [{ find: new RegExp(`^phi-rx${subpath === '.' ? '' : subpath.slice(1).replace('/', '\\/')}$`), replacement: fileURLToPath(new URL(target['phi-rx-source'], import.meta.url)) }]
    : [],
);

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['test/**/*.test.ts'],
    // Emitted events deep-frozen in every test (PHI_RX_FREEZE=1): nothing may change an event after it went out.
    setupFiles: ['test/setup/freeze-events.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One worker process runs many test files, importing phi-rx once: started afresh per file (isolate: true), the
    // suite spent more time importing rxjs and src/ than in its tests. Tests needing a fresh process start one.
    isolate: false,
    // Two workers at least: much of the suite waits on child processes, servers and installs, so a 2-core machine
    // runs it in about 3 minutes with two (about 4.2 with vitest's default of one, cores - 1).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
