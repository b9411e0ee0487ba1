export { SkillSet, SKILLS_PREAMBLE, escapeXml, parseFrontmatter } from './skill-set.js';
export type { Skill, SkillLoadOptions, SkillWarning } from './skill-set.js';
