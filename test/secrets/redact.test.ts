import { describe, expect, it } from 'vitest';
import { createStreamRedactor, envEntriesNamed, isSecretName, redactJson, redactSecrets } from '../../src/secrets/redact.js';

const OPENAI_KEY = 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z';
const ENV: NodeJS.ProcessEnv = {
  OPENAI_API_KEY: OPENAI_KEY,
  DEPLOY_TOKEN: 'tok/with+slash=9',
  DB_PASSWORD: 'hunter22',
  PLAIN_PASSWORD: 'postgres', // one character class, 8 long: a word, not redacted
  FEATURE_KEY: 'on', // too short
  SSH_KEY: '/home/me/.ssh/id_ed25519', // a path
  HOME: '/home/me',
};

describe('redactSecrets', () => {
  it('replaces credential-named variables\' values by a mark naming the variable', () => {
    const text = `key=${OPENAI_KEY} deploy=tok/with+slash=9 db=hunter22`;
    expect(redactSecrets(text, ENV)).toBe(
      'key=[redacted:OPENAI_API_KEY] deploy=[redacted:DEPLOY_TOKEN] db=[redacted:DB_PASSWORD]',
    );
  });

  it('leaves trivial values, paths and other variables alone', () => {
    const text = 'postgres on /home/me/.ssh/id_ed25519 at /home/me';
    expect(redactSecrets(text, ENV)).toBe(text);
  });

  const shapes: Array<[string, string]> = [
    ['an OpenAI key', 'sk-0123456789abcdefghijABCDEFGHIJ0123456789abcdef'],
    ['an Anthropic key', 'sk-ant-api03-AbCdEf0123456789_-AbCdEf0123456789'],
    ['a GitHub token', 'ghp_0123456789abcdefghijABCDEFGHIJ012345'],
    ['a GitHub fine-grained token', 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789'],
    ['a Slack token', 'xoxb-123456789012-1234567890123-AbCdEfGhIjKl'],
    ['an AWS access key id', 'AKIAIOSFODNN7EXAMPLE'],
  ];
  for (const [what, secret] of shapes) {
    it(`redacts ${what} found in text, whatever the environment`, () => {
      const out = redactSecrets(`echo "${secret}" > x`, {});
      expect(out).not.toContain(secret);
      expect(out).toMatch(/^echo "\[redacted:[a-z-]+\]" > x$/);
    });
  }

  it('does not take slugs and words for keys', () => {
    const text = 'task-management-dashboard-component sk-learn-classifier-pipeline-tuning risk-assessment';
    expect(redactSecrets(text, {})).toBe(text);
  });

  it('knows which names hold credentials', () => {
    for (const name of ['OPENAI_API_KEY', 'GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'DB_PASSWORD', 'PGPASSWORD', 'CLIENT_SECRET']) {
      expect(isSecretName(name), name).toBe(true);
    }
    for (const name of ['HOME', 'PATH', 'KEYBOARD', 'TOKENIZERS_PARALLELISM', 'MONKEY']) {
      expect(isSecretName(name), name).toBe(false);
    }
  });
});

describe('redactJson', () => {
  it('redacts every string of a record, nested, keeping its shape and other values', () => {
    const record = { turn: 2, ok: true, none: null, agent: { finalMessage: `k ${OPENAI_KEY}`, lines: ['a', `b ${OPENAI_KEY}`] } };
    expect(redactJson(record, ENV)).toEqual({
      turn: 2,
      ok: true,
      none: null,
      agent: { finalMessage: 'k [redacted:OPENAI_API_KEY]', lines: ['a', 'b [redacted:OPENAI_API_KEY]'] },
    });
  });
});

describe('redactJson without a secret, and with one JSON escapes', () => {
  it('returns the record itself when it holds no secret (one scan, no copy)', () => {
    const record = { goals: [{ id: 'g1', condition: 'tests pass', tokens: 12 }] };
    expect(redactJson(record, ENV)).toBe(record);
  });

  it('finds a value holding quotes and backslashes, which JSON text escapes', () => {
    const env = { ODD_SECRET: 'a"b\\c-0123456789xyz' };
    expect(redactJson({ line: `x ${env.ODD_SECRET} y` }, env)).toEqual({ line: 'x [redacted:ODD_SECRET] y' });
  });
});

describe('createStreamRedactor', () => {
  // Every way of cutting the text in two, and in single characters: the secret never comes out whole or in part.
  const text = `start ${OPENAI_KEY} middle tok/with+slash=9 and ghp_0123456789abcdefghijABCDEFGHIJ012345 end\n`;
  const expected = redactSecrets(text, ENV);

  it('catches a secret split across two chunks at any point', () => {
    for (let cut = 0; cut <= text.length; cut += 1) {
      const redactor = createStreamRedactor(ENV);
      const out = redactor.push(text.slice(0, cut)) + redactor.push(text.slice(cut)) + redactor.flush();
      expect(out, `cut at ${cut}`).toBe(expected);
    }
  });

  it('catches secrets arriving one character at a time', () => {
    const redactor = createStreamRedactor(ENV);
    let out = '';
    for (const char of text) out += redactor.push(char);
    expect(out + redactor.flush()).toBe(expected);
  });

  it('holds back only what could be the start of a secret', () => {
    const redactor = createStreamRedactor({});
    expect(redactor.push('line one\nline two ')).toBe('line one\nline two ');
    expect(redactor.push('partial')).toBe('');
    expect(redactor.push(' word\n')).toBe('partial word\n');
  });
});

describe('envEntriesNamed', () => {
  it('reads the values of the wanted names only, and skips unset ones', () => {
    const read: string[] = [];
    const values: Record<string, string | undefined> = { PATH: '/usr/bin', HOME: '/home/u', OPENAI_API_KEY: 'sk-value', UNSET_TOKEN: undefined };
    const env = new Proxy(values, {
      get(target, name) {
        if (typeof name === 'string') read.push(name);
        return typeof name === 'string' ? target[name] : undefined;
      },
    });
    expect(envEntriesNamed(env, isSecretName)).toEqual([['OPENAI_API_KEY', 'sk-value']]);
    expect(read).toEqual(['OPENAI_API_KEY', 'UNSET_TOKEN']);
  });

  it('gives the same answer for a name however often it is asked', () => {
    for (let round = 0; round < 3; round += 1) {
      expect(isSecretName('GITHUB_TOKEN')).toBe(true);
      expect(isSecretName('TOKENIZER_PATH')).toBe(false);
    }
  });
});
