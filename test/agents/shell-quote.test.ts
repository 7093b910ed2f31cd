import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { createCommandAgent } from '../../src/agents/command-agent.js';
import { findPlaceholders, quoteForShell, quoteShellWord, substitutePlaceholders } from '../../src/agents/shell-quote.js';
import { makeTempDir } from './support.js';

// Runs `command` through the command agent and returns its output lines.
async function runShell(command: string, prompt: string): Promise<string[]> {
  const dir = await makeTempDir();
  const result = await createCommandAgent({ command }).runTurn(
    {
      goalId: 'g',
      turn: 1,
      condition: 'c',
      prompt,
      workspace: dir,
      promptPath: join(dir, 'prompt.txt'),
      transcriptPath: join(dir, 'turn.log'),
      timeoutMs: 10_000,
      turnTokenLimit: 0,
    },
    new AbortController().signal,
  );
  expect(result.outcome).toBe('completed');
  return result.outputTail.split('\n').slice(0, -1);
}

describe('quoteForShell', () => {
  test.each([
    ['plain', "'plain'"],
    ["it's", "'it'\\''s'"],
    ['', "''"],
    ["''", "''\\'''\\'''"],
  ])('%j → %s', (value, quoted) => {
    expect(quoteForShell(value)).toBe(quoted);
  });
});

describe('findPlaceholders', () => {
  test.each([
    ['agent {prompt}', ['bare']],
    ["agent '{prompt}' {prompt}", ['single-quoted', 'bare']],
    ['agent "{prompt}"', ['double-quoted']],
    ['agent "x" {prompt}', ['bare']],
    ['agent "a \\" {prompt}"', ['double-quoted']],
    ['agent \\"{prompt}', ['bare']],
    ["agent \"it's\" {prompt}", ['bare']],
    ["agent 'say \"hi' {prompt}", ['bare']],
    ['agent `echo {prompt}`', ['backquoted']],
    ['agent $(echo {prompt})', ['bare']],
    ['agent', []],
  ])('%s', (command, contexts) => {
    expect(findPlaceholders(command).map((found) => found.context)).toEqual(contexts);
  });
});

describe('substitutePlaceholders', () => {
  test('a bare placeholder takes the word; a single-quoted one closes and reopens the quote', () => {
    expect(substitutePlaceholders("a {prompt} 'x{prompt}y'", "'P'")).toBe("a 'P' 'x''P''y'");
  });

  test('refuses a double-quoted placeholder', () => {
    expect(() => substitutePlaceholders('a "{prompt}"', "'P'")).toThrow(/double-quoted/);
  });

  test('the shell reads every allowed context back as the literal prompt', async () => {
    const prompt = `it's "x" $(echo ran) \`echo ran\` \\ $HOME\nnext`;
    const lines = await runShell(`printf '%s|\\n' {prompt} 'pre-{prompt}-post' $(printf %s {prompt} | wc -c)`, prompt);
    expect(lines.join('\n')).toBe(`${prompt}|\npre-${prompt}-post|\n${Buffer.byteLength(prompt)}|`);
  });

  test('a big prompt in single quotes comes from the prompt file', async () => {
    const prompt = `${"'".repeat(60_000)}$(echo ran)`;
    const lines = await runShell(`printf %s '<{prompt}>' | wc -c`, prompt);
    expect(Number(lines[0])).toBe(prompt.length + 2);
  });

  test('a backquoted placeholder is refused when the agent is created', () => {
    expect(() => createCommandAgent({ command: 'agent `cat {prompt}`' })).toThrow(/is backquoted in/);
  });
});

describe('quoteShellWord', () => {
  test('plain words stay bare; anything else is quoted so the shell reads it back as the same one word', async () => {
    expect(quoteShellWord('/usr/bin/node')).toBe('/usr/bin/node');
    expect(quoteShellWord('')).toBe("''");
    const odd = "Jo's tools/$(touch x) `y` *";
    expect(quoteShellWord(odd)).toBe(quoteForShell(odd));
    expect(await runShell(`printf '%s\\n' ${quoteShellWord(odd)} ${quoteShellWord('plain')}`, 'unused')).toEqual([odd, 'plain']);
  });
});
