import type { Dirent } from 'node:fs';
import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';

/** One skill: a folder with a `SKILL.md` whose YAML frontmatter names and describes it. */
export interface Skill {
  readonly name: string;
  /** One-line summary of what the skill does and when to use it. */
  readonly description: string;
  /** Absolute path of the `SKILL.md` file; the agent reads it on demand. */
  readonly filePath: string;
  /** Absolute path of the skill's folder; paths inside the skill are relative to it. */
  readonly baseDir: string;
  /** Where it was loaded from: `dir:0`, `dir:1`, ... or a label given to `loadDir`. */
  readonly source: string;
  /** The other frontmatter fields (license, allowed-tools, metadata, ...), as parsed. */
  readonly frontmatter: Readonly<Record<string, unknown>>;
}

/** A file that could not be used as a skill, and why. Loading never throws for these. */
export interface SkillWarning {
  readonly path: string;
  readonly message: string;
}

export interface SkillLoadOptions {
  /** How many folder levels below each directory are searched for `SKILL.md` (default 4). */
  maxDepth?: number;
  /** Folders visited per directory at most, a guard against huge trees (default 2000). */
  maxDirectories?: number;
}

const SKILL_FILE = 'SKILL.md';
const DEFAULT_MAX_DEPTH = 4;
const DEFAULT_MAX_DIRECTORIES = 2000;

/** The text put before the XML index by `appendToSystemPrompt`. */
export const SKILLS_PREAMBLE =
  "The following skills provide specialized instructions for specific tasks. When a task matches a skill's " +
  'description, read its SKILL.md file at the given location with the read_file tool and follow it. ' +
  "Relative paths inside a skill are relative to the skill's folder.";

/**
 * An immutable set of skills keyed by name, plus the warnings met while loading them.
 *
 * @example
 * const skills = await SkillSet.load(['~/.agent/skills', './.agent/skills'].map(expand));
 * for (const w of skills.warnings) console.warn(`${w.path}: ${w.message}`);
 * const systemPrompt = skills.appendToSystemPrompt('You are a coding agent.');
 */
export class SkillSet {
  private readonly byName: ReadonlyMap<string, Skill>;
  readonly warnings: readonly SkillWarning[];

  private constructor(byName: ReadonlyMap<string, Skill>, warnings: readonly SkillWarning[]) {
    this.byName = byName;
    this.warnings = warnings;
  }

  static empty(): SkillSet {
    return new SkillSet(new Map(), []);
  }

  /** A set of the given skills; on a name conflict the later one wins. */
  static of(skills: Iterable<Skill>): SkillSet {
    const byName = new Map<string, Skill>();
    for (const skill of skills) byName.set(skill.name, skill);
    return new SkillSet(byName, []);
  }

  /**
   * Loads every directory in order, tagging skills `dir:0`, `dir:1`, ...; a skill in a later
   * directory overrides one of the same name in an earlier one.
   */
  static async load(dirs: readonly string[], options: SkillLoadOptions = {}): Promise<SkillSet> {
    let set = SkillSet.empty();
    for (const [i, dir] of dirs.entries()) set = set.merge(await SkillSet.loadDir(dir, `dir:${i}`, options));
    return set;
  }

  /**
   * Loads the skills under one directory: every `SKILL.md` found by searching it and its
   * folders (hidden folders and node_modules excepted, symlinks followed once, a skill's own
   * folders not searched further). Files with missing or bad frontmatter become warnings.
   */
  static async loadDir(dir: string, source: string, options: SkillLoadOptions = {}): Promise<SkillSet> {
    const root = path.resolve(dir);
    const warnings: SkillWarning[] = [];
    const byName = new Map<string, Skill>();
    const files = await findSkillFiles(root, options, warnings);
    for (const file of files) {
      const loaded = await loadSkill(file, source);
      if ('message' in loaded) {
        warnings.push(loaded);
        continue;
      }
      const existing = byName.get(loaded.name);
      if (existing) {
        warnings.push({
          path: file,
          message: `duplicate skill name "${loaded.name}" (already defined in ${existing.filePath}); skipped`,
        });
        continue;
      }
      byName.set(loaded.name, loaded);
    }
    return new SkillSet(byName, warnings);
  }

  /** A new set with `other`'s skills added; `other` wins on a name conflict. Warnings are kept from both. */
  merge(other: SkillSet): SkillSet {
    const byName = new Map(this.byName);
    for (const skill of other.skills) byName.set(skill.name, skill);
    return new SkillSet(byName, [...this.warnings, ...other.warnings]);
  }

  get skills(): readonly Skill[] {
    return [...this.byName.values()];
  }

  get size(): number {
    return this.byName.size;
  }

  get(name: string): Skill | undefined {
    return this.byName.get(name);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /**
   * The skills as an `<available_skills>` XML block (name, description, location of each),
   * ready to put in a system prompt; empty text when there are no skills.
   */
  formatForPrompt(): string {
    if (this.byName.size === 0) return '';
    const entries = this.skills.map((s) =>
      [
        '  <skill>',
        `    <name>${escapeXml(s.name)}</name>`,
        `    <description>${escapeXml(s.description)}</description>`,
        `    <location>${escapeXml(s.filePath)}</location>`,
        '  </skill>',
      ].join('\n'),
    );
    return ['<available_skills>', ...entries, '</available_skills>'].join('\n');
  }

  /** `prompt` followed by a short instruction and the XML index; `prompt` itself when there are no skills. */
  appendToSystemPrompt(prompt: string): string {
    const index = this.formatForPrompt();
    if (index === '') return prompt;
    const block = `${SKILLS_PREAMBLE}\n\n${index}`;
    return prompt.trim() === '' ? block : `${prompt.replace(/\s+$/, '')}\n\n${block}`;
  }
}

/** Escapes text for an XML element body or attribute. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => XML_ENTITIES[c] as string);
}

const XML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

async function findSkillFiles(root: string, options: SkillLoadOptions, warnings: SkillWarning[]): Promise<string[]> {
  const rootInfo = await stat(root).catch(() => undefined);
  if (rootInfo === undefined || !rootInfo.isDirectory()) {
    warnings.push({ path: root, message: rootInfo ? 'not a directory' : 'skills directory not found' });
    return [];
  }
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  let budget = options.maxDirectories ?? DEFAULT_MAX_DIRECTORIES;
  const visited = new Set<string>();
  const found: string[] = [];
  const queue: { dir: string; depth: number }[] = [{ dir: root, depth: 0 }];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (budget-- <= 0) {
      warnings.push({ path: root, message: `stopped searching after ${options.maxDirectories ?? DEFAULT_MAX_DIRECTORIES} folders` });
      break;
    }
    const real = await realpath(next.dir).catch(() => undefined);
    if (real === undefined || visited.has(real)) continue;
    visited.add(real);
    const entries = await readdir(next.dir, { withFileTypes: true }).catch(() => [] as Dirent[]);
    if (entries.some((e) => e.name === SKILL_FILE && (e.isFile() || e.isSymbolicLink()))) {
      found.push(path.join(next.dir, SKILL_FILE));
      continue; // a skill's own folders hold its resources, not more skills
    }
    if (next.depth >= maxDepth) continue;
    const subdirs = entries
      .filter((e) => (e.isDirectory() || e.isSymbolicLink()) && !e.name.startsWith('.') && e.name !== 'node_modules')
      .map((e) => e.name)
      .sort();
    for (const name of subdirs) queue.push({ dir: path.join(next.dir, name), depth: next.depth + 1 });
  }
  return found.sort();
}

async function loadSkill(filePath: string, source: string): Promise<Skill | SkillWarning> {
  let text: string;
  try {
    text = await readFile(filePath, 'utf8');
  } catch (e) {
    return { path: filePath, message: `cannot read: ${(e as Error).message}` };
  }
  const parsed = parseFrontmatter(text);
  if ('error' in parsed) return { path: filePath, message: parsed.error };
  const { name, description, ...rest } = parsed.data;
  if (typeof name !== 'string' || name.trim() === '') {
    return { path: filePath, message: 'frontmatter field "name" is required and must be a non-empty string' };
  }
  if (typeof description !== 'string' || description.trim() === '') {
    return { path: filePath, message: 'frontmatter field "description" is required and must be a non-empty string' };
  }
  return {
    name: name.trim(),
    description: description.trim().replace(/\s*\n\s*/g, ' '),
    filePath,
    baseDir: path.dirname(filePath),
    source,
    frontmatter: rest,
  };
}

/** The YAML between a leading `---` line and the next `---` (or `...`) line, parsed. */
export function parseFrontmatter(text: string): { data: Record<string, unknown> } | { error: string } {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trim() !== '---') return { error: 'missing YAML frontmatter (the file must start with a "---" line)' };
  const end = lines.findIndex((line, i) => i > 0 && (line.trim() === '---' || line.trim() === '...'));
  if (end === -1) return { error: 'unterminated YAML frontmatter (no closing "---" line)' };
  let data: unknown;
  try {
    data = parseYaml(lines.slice(1, end).join('\n'), { logLevel: 'error' });
  } catch (e) {
    return { error: `invalid YAML frontmatter: ${(e as Error).message.split('\n')[0]}` };
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return { error: 'YAML frontmatter must be a mapping of fields' };
  }
  return { data: data as Record<string, unknown> };
}
