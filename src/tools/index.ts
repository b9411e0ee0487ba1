import type { AnyTool } from '../types/tool.js';
import { bashTool } from './bash.js';
import type { BashToolOptions } from './bash.js';
import { editFileTool } from './edit-file.js';
import { listFilesTool } from './list-files.js';
import type { ListFilesToolOptions } from './list-files.js';
import type { WorkspaceOptions } from './paths.js';
import { readFileTool } from './read-file.js';
import type { ReadFileToolOptions } from './read-file.js';
import { searchTool } from './search.js';
import type { SearchToolOptions } from './search.js';
import { writeFileTool } from './write-file.js';

export { defineTool } from './define-tool.js';
export type { ToolSpec } from './define-tool.js';
export { safeToolName, uniqueToolName, TOOL_NAME_PATTERN } from './tool-name.js';
export { bashTool, DEFAULT_BASH_ENV, DEFAULT_DENY_PATTERNS } from './bash.js';
export type { BashArgs, BashToolOptions } from './bash.js';
export { readFileTool } from './read-file.js';
export type { ReadFileArgs, ReadFileToolOptions } from './read-file.js';
export { writeFileTool } from './write-file.js';
export type { WriteFileArgs, WriteFileToolOptions } from './write-file.js';
export { editFileTool } from './edit-file.js';
export type { EditFileArgs, EditFileToolOptions } from './edit-file.js';
export { listFilesTool } from './list-files.js';
export type { ListFilesArgs, ListFilesToolOptions } from './list-files.js';
export { searchTool } from './search.js';
export type { SearchArgs, SearchMatch, SearchToolOptions } from './search.js';
export { resolvePath, workspace } from './paths.js';
export type { Workspace, WorkspaceOptions } from './paths.js';
export { globMatcher, isIgnored, parseGitignore } from './gitignore.js';
export type { IgnoreFile, IgnoreRule } from './gitignore.js';

/** A tool's own options in {@link DefaultToolsOptions}: all but the workspace, which the toolset shares. */
export type ToolTuning<O> = Omit<O, keyof WorkspaceOptions>;

export interface DefaultToolsOptions extends WorkspaceOptions {
  bash?: ToolTuning<BashToolOptions>;
  readFile?: ToolTuning<ReadFileToolOptions>;
  listFiles?: ToolTuning<ListFilesToolOptions>;
  search?: ToolTuning<SearchToolOptions>;
}

/**
 * The built-in toolset, in this order: `bash`, `read_file`, `write_file`, `edit_file`,
 * `list_files`, `search`. All share one working directory and, when `root` is set, one
 * confinement root for their paths (bash commands themselves are not confined).
 *
 * @example
 * const tools = defaultTools({ cwd: process.cwd(), root: process.cwd(), bash: { timeoutMs: 30_000 } });
 */
export function defaultTools(options: DefaultToolsOptions): AnyTool[] {
  const ws: WorkspaceOptions = { cwd: options.cwd, ...(options.root === undefined ? {} : { root: options.root }) };
  return [
    bashTool({ ...options.bash, ...ws }),
    readFileTool({ ...options.readFile, ...ws }),
    writeFileTool(ws),
    editFileTool(ws),
    listFilesTool({ ...options.listFiles, ...ws }),
    searchTool({ ...options.search, ...ws }),
  ];
}

export * from '../skills/index.js';
