// goald's version, as `goald --version` prints it and the daemon reports it (package.json's "version";
// test/cli/bundled-bin.test.ts keeps them equal).
export const GOALD_VERSION = '0.1.0';
