import { expect, it } from 'vitest';
import { packagesLoadedBySteps, srcModule } from '../../support/loaded-packages.js';

it('import "phi-rx" never loads @opentelemetry/api; "phi-rx/otel" does', async () => {
  const loadedBefore = await packagesLoadedBySteps(`
const phi = await import(${srcModule('index.ts')});
new phi.BasicAgent({ model: phi.anthropic('claude-sonnet-4') });
step('root');
await import(${srcModule('integrations/otel/index.ts')});
step('otel');
`);
  expect(loadedBefore('root')).toContain('rxjs');
  expect(loadedBefore('root')).not.toContain('@opentelemetry/api');
  expect(loadedBefore('otel')).toContain('@opentelemetry/api');
}, 30_000);
