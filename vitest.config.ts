import { defaultClientConditions, defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// `phi-rx-source`: examples and tests that import `phi-rx` (package self-reference) get src/, not dist/.
export default defineConfig({
  resolve: { conditions: ['phi-rx-source', ...defaultClientConditions] },
  ssr: { resolve: { conditions: ['phi-rx-source', ...defaultServerConditions] } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
