import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
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
  await transcript.close('# footer');
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
    await transcript.close('# footer');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'goal'))).mode & 0o777).toBe(0o700);
  });
});
