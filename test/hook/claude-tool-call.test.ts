import { describe, expect, test } from 'vitest';
import { readClaudeToolCall } from '../../src/hook/claude-tool-call.js';

const CWD = '/home/dev/project';

describe('readClaudeToolCall', () => {
  test.each([
    ['Write names its file', 'Write', { file_path: `${CWD}/src/a.ts`, content: 'x' }, { name: 'Write', filePath: 'src/a.ts' }],
    ['Edit names its file', 'Edit', { file_path: `${CWD}/src/a.ts`, old_string: 'a', new_string: 'b' }, { name: 'Edit', filePath: 'src/a.ts' }],
    ['MultiEdit names its file', 'MultiEdit', { file_path: `${CWD}/b.ts`, edits: [] }, { name: 'MultiEdit', filePath: 'b.ts' }],
    ['NotebookEdit names its notebook', 'NotebookEdit', { notebook_path: `${CWD}/n.ipynb` }, { name: 'NotebookEdit', filePath: 'n.ipynb' }],
    ['a file outside the cwd stays absolute', 'Write', { file_path: '/tmp/x.ts' }, { name: 'Write', filePath: '/tmp/x.ts' }],
    ['a sibling directory sharing a prefix stays absolute', 'Write', { file_path: `${CWD}-old/x.ts` }, { name: 'Write', filePath: `${CWD}-old/x.ts` }],
    ['a relative path is kept', 'Write', { file_path: 'src/a.ts' }, { name: 'Write', filePath: 'src/a.ts' }],
    ['Bash names its command', 'Bash', { command: 'npm test', description: 'tests' }, { name: 'Bash', command: 'npm test' }],
    ['Read writes nothing', 'Read', { file_path: `${CWD}/src/a.ts` }, { name: 'Read' }],
    ['Grep writes nothing', 'Grep', { pattern: 'x', path: CWD }, { name: 'Grep' }],
    ['an MCP tool is just its name', 'mcp__github__create_issue', { title: 't' }, { name: 'mcp__github__create_issue' }],
    ['a prototype key is not a tool', 'toString', { file_path: 'x' }, { name: 'toString' }],
    ['a missing input', 'Write', undefined, { name: 'Write' }],
    ['a blank command', 'Bash', { command: '  ' }, { name: 'Bash' }],
    ['a non-string path', 'Write', { file_path: 42 }, { name: 'Write' }],
  ])('%s', (_, name, input, expected) => {
    expect(readClaudeToolCall(name, input, CWD)).toEqual(expected);
  });

  test('without a cwd paths stay as given', () => {
    expect(readClaudeToolCall('Write', { file_path: `${CWD}/a.ts` })).toEqual({ name: 'Write', filePath: `${CWD}/a.ts` });
  });
});
