import { describe, expect, test } from 'vitest';
import { HOOK_TIMEOUT_SECONDS, buildClaudeHookSettings } from '../../src/hook/claude-hook-settings.js';
import { GoaldError } from '../../src/errors.js';

describe('buildClaudeHookSettings', () => {
  test('registers one PostToolUse command hook for every tool', () => {
    const settings = JSON.parse(buildClaudeHookSettings({ goaldCommand: ['/usr/bin/node', '/opt/goald/dist/src/cli/bin.js'] })) as unknown;
    expect(settings).toEqual({
      hooks: {
        PostToolUse: [
          {
            matcher: '*',
            hooks: [
              {
                type: 'command',
                command: '/usr/bin/node /opt/goald/dist/src/cli/bin.js hook post-tool-use',
                timeout: HOOK_TIMEOUT_SECONDS,
              },
            ],
          },
        ],
      },
    });
  });

  test('is one line of JSON, fit for an argv word', () => {
    expect(buildClaudeHookSettings({ goaldCommand: ['goald'] })).not.toContain('\n');
  });

  test('words that need quoting are single-quoted for the shell', () => {
    const settings = JSON.parse(
      buildClaudeHookSettings({ goaldCommand: ['/Users/Jo Doe/.nvm/node', "/opt/it's here/bin.js"] }),
    ) as { hooks: { PostToolUse: Array<{ hooks: Array<{ command: string }> }> } };
    expect(settings.hooks.PostToolUse[0]?.hooks[0]?.command).toBe(
      `'/Users/Jo Doe/.nvm/node' '/opt/it'\\''s here/bin.js' hook post-tool-use`,
    );
  });

  test('an empty command is a goald bug', () => {
    expect(() => buildClaudeHookSettings({ goaldCommand: [] })).toThrow(GoaldError);
  });
});
