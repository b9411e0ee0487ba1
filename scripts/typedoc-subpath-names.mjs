// A TypeDoc plugin (typedoc.config.mjs): names each module of the API reference by the import a user
// writes (`phi-rx`, `phi-rx/providers`) rather than by its source folder (`index`, `sources/providers`).
// The names come from package.json's `exports`, like the entry points.
import { readFileSync } from 'node:fs';
import { Converter, ReflectionKind } from 'typedoc';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

/** TypeDoc's name for an entry (its path under src/, without `/index.ts`; `index` for src/index.ts) → the import. */
const NAMES = Object.fromEntries(
  Object.entries(pkg.exports)
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => [
      target['phi-rx-source'].replace(/^\.\/src\//, '').replace(/\/index\.ts$/, '').replace(/^index\.ts$/, 'index'),
      subpath === '.' ? 'phi-rx' : `phi-rx/${subpath.slice(2)}`,
    ]),
);

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (_context, reflection) => {
    if (reflection.kindOf(ReflectionKind.Module) && NAMES[reflection.name]) reflection.name = NAMES[reflection.name];
  });
}
