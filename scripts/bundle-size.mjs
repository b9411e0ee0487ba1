// What phi-rx costs in a browser app, measured as a user gets it:
//
//   node scripts/bundle-size.mjs [--tarball phi-rx-x.y.z.tgz] [--json]
//
// The package is built (JavaScript only) and packed unless --tarball names one, installed into an
// empty temp project (`npm install --prefer-offline`: phi-rx's dependencies and rxjs, none of the
// optional peers), and small apps are bundled with esbuild for the browser, minified:
//   - "BasicAgent + transcript": an agent on an Anthropic model whose messages a page shows;
//   - one app per provider: the same agent on that provider's model constructor.
// Each app is bundled twice: as one file (esbuild's default, no code splitting) and code-split
// (`--splitting`, what Vite and webpack do by default). Split, a page loads the app's chunk and its
// static imports up front ("initial"), and the provider's chunk when the first stream starts
// ("+ provider"): the default provider registry imports each built-in provider on first use.
// Sizes are bytes of minified JavaScript and of the same gzipped (level 9), printed in KB (1000 B).
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const option = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);

/** The apps: a model constructor from `phi-rx` and a model id it accepts. */
const PROVIDERS = {
  anthropic: "anthropic('claude-sonnet-4-5')",
  openai: "openai('gpt-4.1')",
  'openai-responses': "openaiResponses('gpt-4.1')",
  'azure-openai': "azureOpenai('my-deployment', { resourceName: 'example' })",
  google: "google('gemini-2.5-flash')",
  'google-vertex': "googleVertex('gemini-2.5-flash', { project: 'p', location: 'us-central1' })",
  bedrock: "bedrock('anthropic.claude-sonnet-4-5-20250929-v1:0')",
};
/** The provider's chunk in phi-rx's dist (the default registry's lazy import), by app name. */
const PROVIDER_CHUNK = {
  anthropic: 'anthropic', openai: 'openai-completions', 'openai-responses': 'openai-responses', 'azure-openai': 'azure-openai',
  google: 'google', 'google-vertex': 'google-vertex', bedrock: 'bedrock',
};

const appSource = (constructor) => {
  const name = constructor.slice(0, constructor.indexOf('('));
  return `import { BasicAgent, transcript, ${name} } from 'phi-rx';
const agent = new BasicAgent({ model: ${constructor} });
transcript(agent.prompt('hi')).subscribe((messages) => document.body.textContent = JSON.stringify(messages));
`;
};

function packed(work) {
  const given = option('--tarball');
  if (given) return path.resolve(given);
  const staging = path.join(work, 'package');
  mkdirSync(staging, { recursive: true });
  execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs'), '--outdir', path.join(staging, 'dist'), '--no-types'], { cwd: root, stdio: 'inherit' });
  for (const file of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE']) copyFileSync(path.join(root, file), path.join(staging, file));
  const out = execFileSync('npm', ['pack', '--json', '--loglevel=error', '--pack-destination', work], { cwd: staging, encoding: 'utf8' });
  return path.join(work, JSON.parse(out)[0].filename);
}

const sizes = (texts) => {
  const joined = Buffer.from(texts.join('\n'));
  return { min: joined.length, gzip: gzipSync(joined, { level: 9 }).length };
};

/** Bundles `entry` in `app`; one file, or split into what loads up front and what the provider adds. */
async function measure(app, entry, provider) {
  const single = await build({ absWorkingDir: app, entryPoints: [entry], bundle: true, format: 'esm', platform: 'browser', minify: true, write: false, logLevel: 'error' });
  const split = await build({
    absWorkingDir: app, entryPoints: [entry], bundle: true, splitting: true, format: 'esm', platform: 'browser', minify: true,
    outdir: path.join(app, 'out'), write: false, metafile: true, logLevel: 'error',
  });
  const outputs = split.metafile.outputs;
  const text = new Map(split.outputFiles.map((f) => [path.relative(app, f.path), f.text]));
  /** An output and every chunk it imports statically. */
  const closure = (start) => {
    const seen = new Set();
    const stack = [start];
    while (stack.length) {
      const file = stack.pop();
      if (seen.has(file)) continue;
      seen.add(file);
      for (const i of outputs[file].imports) if (i.kind === 'import-statement') stack.push(i.path);
    }
    return seen;
  };
  const main = Object.keys(outputs).find((f) => outputs[f].entryPoint === entry);
  const initial = closure(main);
  const chunkPattern = new RegExp(`/chunks/${PROVIDER_CHUNK[provider]}-[A-Z0-9]+\\.js$`);
  const providerOut = Object.keys(outputs).find((f) => chunkPattern.test(outputs[f].entryPoint ?? ''));
  if (!providerOut) throw new Error(`no lazy chunk for the ${provider} provider in the split bundle of ${entry}`);
  const added = [...closure(providerOut)].filter((f) => !initial.has(f));
  return {
    single: sizes([single.outputFiles[0].text]),
    initial: sizes([...initial].map((f) => text.get(f))),
    withProvider: sizes([...initial, ...added].map((f) => text.get(f))),
  };
}

const work = mkdtempSync(path.join(tmpdir(), 'phi-rx-bundle-size-'));
try {
  const tarball = packed(work);
  const app = path.join(work, 'app');
  mkdirSync(app);
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'bundle-size', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], { cwd: app, stdio: 'inherit' });
  const rows = [];
  for (const [provider, constructor] of Object.entries(PROVIDERS)) {
    const entry = `${provider}.js`;
    writeFileSync(path.join(app, entry), appSource(constructor));
    rows.push({ app: provider === 'anthropic' ? 'BasicAgent + transcript (anthropic)' : provider, ...(await measure(app, entry, provider)) });
  }
  if (argv.includes('--json')) console.log(JSON.stringify(rows, null, 2));
  else {
    const kb = ({ min, gzip }) => `${(min / 1000).toFixed(1)} / ${(gzip / 1000).toFixed(1)}`;
    console.log('KB min / gzip, esbuild --platform=browser --minify\n');
    console.log('| app | one file | split: initial | split: + its provider |');
    console.log('|---|---:|---:|---:|');
    for (const r of rows) console.log(`| ${r.app} | ${kb(r.single)} | ${kb(r.initial)} | ${kb(r.withProvider)} |`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
