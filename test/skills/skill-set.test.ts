import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SKILLS_PREAMBLE, SkillSet } from '../../src/skills/index.js';

const skillMd = (name: string, description: string, body = 'Steps...') =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\n${body}\n`;

async function put(file: string, content: string): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  return file;
}

describe('SkillSet', () => {
  let base: string;
  beforeEach(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'phi-rx-skills-'));
  });
  afterEach(() => rm(base, { recursive: true, force: true }));

  it('finds SKILL.md files recursively and reads name and description from the frontmatter', async () => {
    const pdf = await put(path.join(base, 'user/pdf/SKILL.md'), skillMd('pdf', 'Fill and merge PDF forms.'));
    await put(path.join(base, 'user/pdf/scripts/fill.py'), 'print()');
    const nested = await put(
      path.join(base, 'user/team/review/SKILL.md'),
      '---\nname: review\ndescription: >\n  Review a pull request\n  for style.\nlicense: MIT\n---\nbody',
    );
    const set = await SkillSet.load([path.join(base, 'user')]);
    expect(set.warnings).toEqual([]);
    expect(set.skills).toEqual([
      {
        name: 'pdf',
        description: 'Fill and merge PDF forms.',
        filePath: pdf,
        baseDir: path.dirname(pdf),
        source: 'dir:0',
        frontmatter: {},
      },
      {
        name: 'review',
        description: 'Review a pull request for style.',
        filePath: nested,
        baseDir: path.dirname(nested),
        source: 'dir:0',
        frontmatter: { license: 'MIT' },
      },
    ]);
  });

  it('lets later directories override earlier ones on a name conflict', async () => {
    await put(path.join(base, 'global/deploy/SKILL.md'), skillMd('deploy', 'Global deploy.'));
    await put(path.join(base, 'global/lint/SKILL.md'), skillMd('lint', 'Global lint.'));
    await put(path.join(base, 'project/deploy/SKILL.md'), skillMd('deploy', 'Project deploy.'));
    const set = await SkillSet.load([path.join(base, 'global'), path.join(base, 'project')]);
    expect(set.size).toBe(2);
    expect(set.get('deploy')).toMatchObject({ description: 'Project deploy.', source: 'dir:1' });
    expect(set.get('lint')).toMatchObject({ description: 'Global lint.', source: 'dir:0' });
  });

  it('reports bad files with their path and skips them, never throwing', async () => {
    const noFront = await put(path.join(base, 's/a/SKILL.md'), '# just markdown\n');
    const noName = await put(path.join(base, 's/b/SKILL.md'), '---\ndescription: x\n---\n');
    const noDesc = await put(path.join(base, 's/c/SKILL.md'), '---\nname: c\ndescription: ""\n---\n');
    const badYaml = await put(path.join(base, 's/d/SKILL.md'), '---\nname: [oops\n---\n');
    const open = await put(path.join(base, 's/e/SKILL.md'), '---\nname: e\ndescription: never closed\n');
    const list = await put(path.join(base, 's/f/SKILL.md'), '---\n- a\n- b\n---\n');
    await put(path.join(base, 's/good/SKILL.md'), skillMd('good', 'Works.'));
    const set = await SkillSet.load([path.join(base, 's')]);
    expect(set.skills.map((s) => s.name)).toEqual(['good']);
    expect(set.warnings).toEqual([
      { path: noFront, message: 'missing YAML frontmatter (the file must start with a "---" line)' },
      { path: noName, message: 'frontmatter field "name" is required and must be a non-empty string' },
      { path: noDesc, message: 'frontmatter field "description" is required and must be a non-empty string' },
      { path: badYaml, message: expect.stringMatching(/^invalid YAML frontmatter: /) },
      { path: open, message: 'unterminated YAML frontmatter (no closing "---" line)' },
      { path: list, message: 'YAML frontmatter must be a mapping of fields' },
    ]);
  });

  it('warns about a missing directory and a duplicate name within one directory', async () => {
    const first = await put(path.join(base, 'd/one/SKILL.md'), skillMd('same', 'First.'));
    const second = await put(path.join(base, 'd/two/SKILL.md'), skillMd('same', 'Second.'));
    const set = await SkillSet.load([path.join(base, 'missing'), path.join(base, 'd')]);
    expect(set.get('same')?.filePath).toBe(first);
    expect(set.warnings).toEqual([
      { path: path.join(base, 'missing'), message: 'skills directory not found' },
      { path: second, message: `duplicate skill name "same" (already defined in ${first}); skipped` },
    ]);
  });

  it('bounds the search depth, skips hidden folders and node_modules, and survives symlink cycles', async () => {
    await put(path.join(base, 'r/a/b/c/d/e/deep/SKILL.md'), skillMd('deep', 'Too deep.'));
    await put(path.join(base, 'r/.hidden/SKILL.md'), skillMd('hidden', 'Hidden.'));
    await put(path.join(base, 'r/node_modules/x/SKILL.md'), skillMd('dep', 'Dependency.'));
    await put(path.join(base, 'r/ok/SKILL.md'), skillMd('ok', 'Fine.'));
    await symlink('..', path.join(base, 'r/a/up'));
    const set = await SkillSet.load([path.join(base, 'r')]);
    expect(set.skills.map((s) => s.name)).toEqual(['ok']);
    const deeper = await SkillSet.load([path.join(base, 'r')], { maxDepth: 10 });
    expect(deeper.skills.map((s) => s.name).sort()).toEqual(['deep', 'ok']);
  });

  it('treats a directory that is itself a skill as one skill', async () => {
    await put(path.join(base, 'solo/SKILL.md'), skillMd('solo', 'Alone.'));
    const set = await SkillSet.loadDir(path.join(base, 'solo'), 'project');
    expect(set.skills.map((s) => [s.name, s.source])).toEqual([['solo', 'project']]);
  });

  it('merges immutably, the other set winning', async () => {
    await put(path.join(base, 'a/x/SKILL.md'), skillMd('x', 'From a.'));
    await put(path.join(base, 'b/x/SKILL.md'), skillMd('x', 'From b.'));
    const a = await SkillSet.loadDir(path.join(base, 'a'), 'a');
    const b = await SkillSet.loadDir(path.join(base, 'b'), 'b');
    const merged = a.merge(b);
    expect(merged.get('x')?.description).toBe('From b.');
    expect(a.get('x')?.description).toBe('From a.');
    expect(b.merge(a).get('x')?.description).toBe('From a.');
  });

  it('renders the <available_skills> XML index, escaping XML', () => {
    const set = SkillSet.of([
      { name: 'pdf', description: 'Use for <PDF> & "forms"', filePath: '/s/pdf/SKILL.md', baseDir: '/s/pdf', source: 'dir:0', frontmatter: {} },
      { name: 'git', description: "Tom's git helper", filePath: '/s/git/SKILL.md', baseDir: '/s/git', source: 'dir:0', frontmatter: {} },
    ]);
    expect(set.formatForPrompt()).toBe(
      [
        '<available_skills>',
        '  <skill>',
        '    <name>pdf</name>',
        '    <description>Use for &lt;PDF&gt; &amp; &quot;forms&quot;</description>',
        '    <location>/s/pdf/SKILL.md</location>',
        '  </skill>',
        '  <skill>',
        '    <name>git</name>',
        '    <description>Tom&apos;s git helper</description>',
        '    <location>/s/git/SKILL.md</location>',
        '  </skill>',
        '</available_skills>',
      ].join('\n'),
    );
  });

  it('appends the index to a system prompt, and leaves the prompt alone without skills', () => {
    const set = SkillSet.of([
      { name: 'x', description: 'd', filePath: '/x/SKILL.md', baseDir: '/x', source: 'dir:0', frontmatter: {} },
    ]);
    expect(set.appendToSystemPrompt('You are helpful.\n')).toBe(`You are helpful.\n\n${SKILLS_PREAMBLE}\n\n${set.formatForPrompt()}`);
    expect(set.appendToSystemPrompt('')).toBe(`${SKILLS_PREAMBLE}\n\n${set.formatForPrompt()}`);
    expect(SkillSet.empty().formatForPrompt()).toBe('');
    expect(SkillSet.empty().appendToSystemPrompt('Prompt.')).toBe('Prompt.');
  });
});
