// `npm run docs`: the API reference, generated from the JSDoc by TypeDoc into api-reference/
// (gitignored). One entry point per public subpath, read from package.json's `exports`, so a new
// subpath is documented without touching this file. Warnings are errors: a `{@link}` that resolves
// to nothing, or a public signature that uses a type no entry point exports (it would be missing
// from the reference), fails the run.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  name: 'phi-rx',
  entryPoints: Object.entries(pkg.exports)
    .filter(([subpath]) => subpath !== './package.json')
    .map(([, target]) => target['phi-rx-source']),
  tsconfig: 'tsconfig.build.json',
  plugin: ['./scripts/typedoc-subpath-names.mjs'],
  out: 'api-reference',
  readme: 'none',
  // Source links to the repository package.json names (this checkout may have no git remote).
  sourceLinkTemplate: `${pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '')}/blob/{gitRevision}/{path}#L{line}`,
  excludePrivate: true,
  // Members inherited from rxjs (Broadcast is a Subject) keep rxjs's docs, whose links point into rxjs.
  excludeExternals: true,
  excludeInternal: true,
  validation: { notExported: true, invalidLink: true, rewrittenLink: true, notDocumented: false, unusedMergeModuleWith: true },
  treatWarningsAsErrors: true,
};
