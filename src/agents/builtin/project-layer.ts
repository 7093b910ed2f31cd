// The project layer of the builtin agent's system prompt: the repository's instructions for agents
// (AGENTS.md, CLAUDE.md, .github/copilot-instructions.md), its detected stack, and a bounded summary of its
// file tree (.gitignore honoured). Every file is read through the workspace confinement: a hostile
// repository's AGENTS.md that is a symlink to ~/.ssh/id_rsa is not sent to the model.

import { readFile } from 'node:fs/promises';
import { cutHead } from '../../cut-text.js';
import { listWorkspaceFiles } from './tools/workspace-files.js';
import { confinePath } from './tools/workspace-path.js';

const INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md', '.github/copilot-instructions.md'];
const MAX_INSTRUCTIONS_CHARS = 6_000;
const MAX_TREE_FILES = 150;

// Manifests that name a stack, and the stack they name.
const STACK_MANIFESTS: ReadonlyArray<[string, string]> = [
  ['package.json', 'Node.js / JavaScript or TypeScript (package.json)'],
  ['tsconfig.json', 'TypeScript (tsconfig.json)'],
  ['pyproject.toml', 'Python (pyproject.toml)'],
  ['requirements.txt', 'Python (requirements.txt)'],
  ['setup.py', 'Python (setup.py)'],
  ['go.mod', 'Go (go.mod)'],
  ['Cargo.toml', 'Rust (Cargo.toml)'],
  ['pom.xml', 'Java / Maven (pom.xml)'],
  ['build.gradle', 'Java or Kotlin / Gradle (build.gradle)'],
  ['build.gradle.kts', 'Kotlin / Gradle (build.gradle.kts)'],
  ['Gemfile', 'Ruby (Gemfile)'],
  ['composer.json', 'PHP (composer.json)'],
  ['mix.exs', 'Elixir (mix.exs)'],
  ['CMakeLists.txt', 'C or C++ / CMake (CMakeLists.txt)'],
  ['Makefile', 'Make (Makefile)'],
];

/** Builds the project layer for the workspace (its real path). */
export async function buildProjectLayer(workspace: string, signal: AbortSignal): Promise<string> {
  const files = await listWorkspaceFiles(workspace, '**', signal);
  const present = new Set(files);
  const sections: string[] = ['# Project'];
  for (const name of INSTRUCTION_FILES) {
    if (!present.has(name)) continue;
    const text = await readConfined(workspace, name);
    if (text !== null && text.trim() !== '') sections.push(`## ${name} (the project's instructions)\n${cutHead(text.trim(), MAX_INSTRUCTIONS_CHARS)}`);
  }
  const stack = STACK_MANIFESTS.filter(([manifest]) => present.has(manifest)).map(([, name]) => name);
  const scripts = present.has('package.json') ? await readScripts(workspace) : null;
  sections.push(`## Stack\n${stack.length === 0 ? 'not detected from the usual manifests' : stack.join('; ')}${scripts === null ? '' : `\npackage.json scripts: ${scripts}`}`);
  const shown = files.slice(0, MAX_TREE_FILES);
  const more = files.length > shown.length ? `\n… and ${files.length - shown.length} more files (list_files shows them)` : '';
  sections.push(`## Files (${files.length}, .gitignore honoured)\n${shown.join('\n')}${more}`);
  return sections.join('\n\n');
}

async function readConfined(workspace: string, name: string): Promise<string | null> {
  const target = await confinePath(workspace, name);
  if (!target.ok) return null;
  try {
    return await readFile(target.absolute, 'utf8');
  } catch {
    return null;
  }
}

// The names of package.json's scripts with their commands, bounded; null when unreadable.
async function readScripts(workspace: string): Promise<string | null> {
  const text = await readConfined(workspace, 'package.json');
  if (text === null) return null;
  try {
    const manifest: unknown = JSON.parse(text);
    if (typeof manifest !== 'object' || manifest === null || !('scripts' in manifest)) return null;
    const scripts = manifest.scripts;
    if (typeof scripts !== 'object' || scripts === null) return null;
    return cutHead(
      Object.entries(scripts)
        .map(([name, command]) => `${name}: ${String(command)}`)
        .join('; '),
      1_000,
    );
  } catch {
    return null;
  }
}
