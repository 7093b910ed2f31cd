// The builtin agent's tools on a real temp repository: confinement (`..`, absolute paths, symlinks, .git),
// protected files, the whitespace-tolerant edit and its candidates, the command policy and bounds. A tool
// never throws for what the model asked: every refusal is a result.

import { symlink } from 'node:fs/promises';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { editFileTool } from '../../../src/agents/builtin/tools/edit-file.js';
import { listFilesTool } from '../../../src/agents/builtin/tools/list-files.js';
import { readFileTool } from '../../../src/agents/builtin/tools/read-file.js';
import { runCommandTool } from '../../../src/agents/builtin/tools/run-command.js';
import { searchCodeTool } from '../../../src/agents/builtin/tools/search-code.js';
import type { Tool, ToolContext } from '../../../src/agents/builtin/tools/tool.js';
import { writeFileTool } from '../../../src/agents/builtin/tools/write-file.js';
import { gitdir } from '../../helpers/gitdir.js';
import { makeTempDir } from '../support.js';

async function setUp(files: Record<string, string> = {}) {
  const repo = await gitdir({ files: { 'src/a.ts': 'export const a = 1;\n', ...files }, initialCommit: true });
  const context: ToolContext = { workspace: repo.dir, checks: [], commands: { allow: [], deny: [] }, passEnv: [], signal: new AbortController().signal };
  const call = (tool: Tool, args: unknown) => tool.invoke(JSON.stringify(args), context);
  return { repo, context, call };
}

describe('workspace confinement', () => {
  it('refuses `..`, absolute paths outside, symlink escapes and .git as tool errors', async () => {
    const { repo, call } = await setUp();
    const outside = await makeTempDir();
    await symlink(outside, repo.path('escape'));
    await symlink(path.join(outside, 'new-file'), repo.path('dangling'));

    for (const [tool, args] of [
      [readFileTool, { path: '../../etc/passwd' }],
      [readFileTool, { path: '/etc/passwd' }],
      [readFileTool, { path: 'escape/secret.txt' }],
      [writeFileTool, { path: 'escape/planted.txt', content: 'x' }],
      [writeFileTool, { path: 'dangling', content: 'x' }],
      [writeFileTool, { path: `${outside}/abs.txt`, content: 'x' }],
      [editFileTool, { path: '../outside.ts', old_string: 'a', new_string: 'b' }],
      [readFileTool, { path: '.git/config' }],
      [writeFileTool, { path: '.git/hooks/pre-commit', content: '#!/bin/sh\n' }],
    ] as const) {
      const result = await call(tool, args);
      expect(result.ok, JSON.stringify(args)).toBe(false);
      expect(result.content).toMatch(/^Error: .*(outside the workspace|symbolic link|inside \.git)/);
    }
    expect(existsSync(path.join(outside, 'planted.txt'))).toBe(false);
    expect(existsSync(path.join(outside, 'new-file'))).toBe(false);
    expect(existsSync(path.join(outside, 'abs.txt'))).toBe(false);
    expect(existsSync(repo.path('.git/hooks/pre-commit'))).toBe(false);
  });

  it('accepts an absolute path inside the workspace and `..` that stays inside', async () => {
    const { repo, call } = await setUp();
    expect((await call(readFileTool, { path: repo.path('src/a.ts') })).content).toContain('export const a = 1;');
    expect((await call(readFileTool, { path: 'src/../src/a.ts' })).ok).toBe(true);
  });

  it("refuses to write the goal's contract and goald's own directory", async () => {
    const { repo, call } = await setUp({ 'goal.config.json': '{"checks":[{"run":"npm test"}]}\n' });
    const write = await call(writeFileTool, { path: 'goal.config.json', content: '{"checks":[]}' });
    const edit = await call(editFileTool, { path: './goal.config.json', old_string: 'npm test', new_string: 'true' });
    const reserved = await call(writeFileTool, { path: '.goald/x', content: 'x' });
    for (const result of [write, edit, reserved]) expect(result).toMatchObject({ ok: false, report: { name: expect.any(String) } });
    expect(write.content).toMatch(/goal's contract/);
    expect(write.report.filePath).toBeUndefined();
    expect(await readFile(repo.path('goal.config.json'), 'utf8')).toContain('npm test');
  });

  it('answers malformed arguments with an error result, never a throw', async () => {
    const { context } = await setUp();
    const notJson = await readFileTool.invoke('{"path": ', context);
    const wrongType = await readFileTool.invoke('{"path": 7}', context);
    expect(notJson).toMatchObject({ ok: false, malformed: true });
    expect(wrongType).toMatchObject({ ok: false, malformed: true });
    expect(wrongType.content).toMatch(/path: /);
  });
});

describe('edit_file', () => {
  const source = 'function total(items) {\n    let sum = 0;\n    for (const item of items) {\n        sum += item.price;\n    }\n    return sum;\n}\n';

  it('applies an edit whose indentation is off, keeping the file\'s indentation', async () => {
    const { repo, call } = await setUp({ 'src/total.js': source });
    const result = await call(editFileTool, {
      path: 'src/total.js',
      old_string: '  for (const item of items) {\n      sum += item.price;\n  }',
      new_string: '  for (const item of items) {\n      sum += item.price * item.quantity;\n  }',
    });
    expect(result).toMatchObject({ ok: true, content: 'edited src/total.js (matched with whitespace ignored)' });
    expect(await readFile(repo.path('src/total.js'), 'utf8')).toBe(source.replace('sum += item.price;', 'sum += item.price * item.quantity;'));
  });

  it('refuses an ambiguous edit and names the places, changing nothing', async () => {
    const twice = 'let x = 1;\nfoo();\nlet y = 2;\nfoo();\n';
    const { repo, call } = await setUp({ 'src/twice.js': twice });
    const exact = await call(editFileTool, { path: 'src/twice.js', old_string: 'foo();', new_string: 'bar();' });
    expect(exact.ok).toBe(false);
    expect(exact.content).toMatch(/occurs 2 times \(line 2, line 4\)/);
    const fuzzy = await call(editFileTool, { path: 'src/twice.js', old_string: '   foo();  ', new_string: 'bar();' });
    expect(fuzzy.content).toMatch(/matches 2 places when whitespace is ignored \(line 2, line 4\)/);
    expect(await readFile(repo.path('src/twice.js'), 'utf8')).toBe(twice);
  });

  it('shows the nearest candidates when the text is not there', async () => {
    const { call } = await setUp({ 'src/total.js': source });
    const result = await call(editFileTool, { path: 'src/total.js', old_string: 'sum += item.cost;', new_string: 'x' });
    expect(result.ok).toBe(false);
    expect(result.content).toMatch(/not found, not even with whitespace ignored. Nearest candidates:\nnear line 4:/);
    expect(result.content).toContain('    4|         sum += item.price;');
  });
});

describe('list_files, search_code, run_command', () => {
  it('honours .gitignore and lists untracked files', async () => {
    const { repo, call } = await setUp({ '.gitignore': 'dist/\n' });
    await repo.write('dist/bundle.js', 'x');
    await repo.write('src/new.ts', 'export const fresh = true;\n');
    const listed = await call(listFilesTool, { pattern: '**/*' });
    expect(listed.content.split('\n')).toEqual(['.gitignore', 'src/a.ts', 'src/new.ts']);
    const found = await call(searchCodeTool, { pattern: 'fresh|bundle' });
    expect(found.content).toBe('src/new.ts:1: export const fresh = true;');
  });

  it('runs a command with its exit code, refuses denied ones, and kills one that runs too long', async () => {
    const { context } = await setUp();
    const policy = { ...context, commands: { allow: [], deny: ['rm *', 'curl*'] } };
    const ok = await runCommandTool.invoke(JSON.stringify({ command: 'echo hi; exit 3' }), policy);
    expect(ok).toMatchObject({ ok: false, content: 'exit code 3\nhi\n', report: { name: 'run_command', command: 'echo hi; exit 3' } });
    const denied = await runCommandTool.invoke(JSON.stringify({ command: 'rm -rf src' }), policy);
    expect(denied.content).toMatch(/agent\.commands\.deny "rm \*"/);
    const slow = await runCommandTool.invoke(JSON.stringify({ command: 'sleep 30', timeoutSeconds: 1 }), policy);
    expect(slow.content).toMatch(/^timed out after 1 s/);
  });

  it('keeps the command away from the model vendors\' credentials', async () => {
    const { context } = await setUp();
    process.env.OPENAI_API_KEY = 'sk-must-not-leak';
    try {
      const result = await runCommandTool.invoke(JSON.stringify({ command: 'echo "key=${OPENAI_API_KEY:-none}"' }), context);
      expect(result.content).toContain('key=none');
    } finally {
      delete process.env.OPENAI_API_KEY;
    }
  });
});
