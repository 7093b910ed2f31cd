import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTranscript } from '../../src/process/transcript.js';

const KEY = 'sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe';
const ENV: NodeJS.ProcessEnv = { ANTHROPIC_API_KEY: KEY };

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'goald-transcript-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeInTwo(output: Buffer, cut: number, name: string): Promise<string> {
  const path = join(dir, 'sub', `${name}.log`);
  const transcript = openTranscript(path, '# header', ENV);
  transcript.write(output.subarray(0, cut));
  transcript.write(output.subarray(cut));
  transcript.close('# footer');
  return readFile(path, 'utf8');
}

describe('openTranscript', () => {
  it('never writes a secret, however the output is cut into chunks (also inside a UTF-8 character)', async () => {
    const output = Buffer.from(`héllo ${KEY} wörld ghp_0123456789abcdefghijABCDEFGHIJ012345\nbye`);
    for (let cut = 0; cut <= output.length; cut += 1) {
      const text = await writeInTwo(output, cut, `cut-${cut}`);
      expect(text, `cut at byte ${cut}`).toBe(
        '# header\nhéllo [redacted:ANTHROPIC_API_KEY] wörld [redacted:github-token]\nbye\n# footer\n',
      );
    }
  });

  it('creates the file 0600 and its directory 0700', async () => {
    const path = join(dir, 'goal', 'turn-1.log');
    const transcript = openTranscript(path, '# header', ENV);
    transcript.close('# footer');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'goal'))).mode & 0o777).toBe(0o700);
    expect(transcript.error).toBeNull();
  });

  it('says why it cannot be written, and then takes output and its close without throwing', async () => {
    await writeFile(join(dir, 'a-file'), 'not a directory');
    const transcript = openTranscript(join(dir, 'a-file', 'turn-1.log'), '# header', ENV);
    expect(transcript.error).toMatch(/^cannot write the transcript .*a-file\/turn-1\.log: .*(EEXIST|ENOTDIR)/);
    transcript.write('output the tail still keeps');
    transcript.close('# footer');
    expect(transcript.error).toMatch(/^cannot write the transcript /);
  });

  it('writes each chunk as it arrives: the file holds the output before the transcript is closed', async () => {
    const path = join(dir, 'live.log');
    const transcript = openTranscript(path, '# header', ENV);
    // The redactor holds back only the end of the output, where a secret may have begun.
    const output = `${'line of output\n'.repeat(1_000)}no newline`;
    transcript.write(output);
    const before = await readFile(path, 'utf8');
    expect(before.startsWith('# header\nline of output\n')).toBe(true);
    expect(before.length).toBeGreaterThan(output.length / 2);
    transcript.close('# footer');
    expect(await readFile(path, 'utf8')).toBe(`# header\n${output}\n# footer\n`);
  });
});
