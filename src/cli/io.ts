// The CLI's view of the terminal: the only place goald writes to stdout/stderr.

export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export const processIO: CliIO = {
  out: (text) => {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  },
  err: (text) => {
    process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  },
  env: process.env,
  cwd: process.cwd(),
};
