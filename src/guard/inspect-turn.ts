// The tamper guard: from the changes since the goal started (already listed by the supervisor) and at most
// two git processes, one after the other (the patch of the test files and package.json files involved, and
// the check of the objects behind them), the findings that make a turn unable to achieve its goal. A turn
// that touched no test file and no package.json itself keeps the last turn's test findings and costs no git
// process at all.

import { matchesPathPattern } from '../breakers/noise.js';
import { objectNamesOf } from '../workspace/object-check.js';
import type { FileChange } from '../workspace/types.js';
import { checkRunners, checkRuns } from './check-runners.js';
import { changedCheckScripts, scriptsRunBy } from './check-scripts.js';
import { agentWroteConfig, whoseFile, WORKSPACE_CONFIG_FILE } from './goald-paths.js';
import { createPatchScanner, type FilePatchSummary } from './patch-scanner.js';
import {
  cleanReport,
  TEST_FINDING_KINDS,
  type GuardInput,
  type GuardNote,
  type GuardReport,
  type GoaldPaths,
  type GuardTreeReader,
  type TamperFinding,
} from './types.js';

// A deleted test *code* file is tamper; a deleted fixture or data file under test/ is not (deleting one
// makes tests fail, not pass). Snapshots count: a deleted snapshot is rewritten to match by the next run.
const TEST_CODE_FILE = /\.(?:[cm]?[jt]sx?|py|go|rs|java|kts?|scala|groovy|rb|php|cs|fs|swift|c|cc|cpp|cxx|ex|exs|erl|clj|lua|sh|bats|dart|zig|nim|jl|ml|hs|snap|feature)$/i;
const PACKAGE_MANIFEST = /(?:^|\/)package\.json$/;
// Ignore files in the tree: the snapshots honour them as they are now (the repository's own .git/info/exclude
// is read as the goal found it; src/workspace/snapshot-git-dir.ts).
const IGNORE_FILE = /(?:^|\/)\.gitignore$/;
// Context lines that make git print a file whole (package.json is read old and new from the patch).
const WHOLE_FILE_CONTEXT = 1_000_000;

/** The guard's findings on one turn; no findings when the guard is off or the turn changed nothing. */
export async function inspectTurn(input: GuardInput, reader: GuardTreeReader, signal?: AbortSignal): Promise<GuardReport> {
  const { settings, delta } = input;
  const report = cleanReport();
  if (!settings.enabled) return report;
  // What the snapshots cannot show is said on every turn, whatever else changed: the evaluator reads it.
  for (const repo of reader.leftOut?.() ?? []) {
    report.notes.push({ path: `${repo}/`, kind: 'nested-repo', detail: 'a git repository of its own, with no commit yet: its files are in no snapshot, diff or inspection' });
  }
  if (delta.empty || delta.files.length === 0) return report;
  const isTest = (file: string): boolean => matchesPathPattern(file, settings.testFiles);
  findPathTamper(input, report, isTest);

  const { turnFiles, prior } = input;
  if (turnFiles !== undefined && prior !== undefined && !turnFiles.some((file) => isTest(file.path) || PACKAGE_MANIFEST.test(file.path) || file.status === 'A')) {
    // Nothing this turn could change what the test files and manifests say since the start.
    report.tamper.push(...prior.tamper.filter((finding) => TEST_FINDING_KINDS.includes(finding.kind)));
    report.notes.push(...prior.notes.filter((note) => note.kind === 'assertions-removed'));
    return report;
  }
  const testFiles = delta.files.filter((file) => isTest(file.path));
  const deletedTests = settings.deletedTests
    ? testFiles.filter((file) => (file.status === 'D' || file.status === 'T') && TEST_CODE_FILE.test(file.path))
    : [];
  // A file added with exactly as many lines as a deleted test file had may be that file moved.
  const moveCandidates = delta.files.filter(
    (file) => file.status === 'A' && !isTest(file.path) && deletedTests.some((deleted) => deleted.added === null ? file.added === null : deleted.deleted === file.added),
  );
  const entries = settings.checkScripts ? [...new Set(input.checkCommands.flatMap(scriptsRunBy))] : [];
  const manifests = entries.length > 0 ? delta.files.filter((file) => PACKAGE_MANIFEST.test(file.path)) : [];

  const paths = [...testFiles, ...moveCandidates, ...manifests].map((file) => file.path);
  const summaries = await readPatch(input, reader, [...new Set(paths)], { isTest, wholeFiles: manifests.length > 0 }, signal);
  report.tamper.push(...(await findForgedFiles(input, reader, [...testFiles, ...manifests].map((file) => file.path), signal)));

  for (const deleted of deletedTests) {
    const finding = describeDeletedTest(deleted, summaries, isTest);
    if (finding !== null) report.tamper.push(finding);
  }
  if (settings.skipMarkers) report.tamper.push(...findSkipMarkers(summaries, isTest));
  for (const manifest of manifests) {
    const parts = summaries.filter((entry) => entry.path === manifest.path);
    // A type change is two entries (the old file removed, the new one added): old from the first, new from the last.
    const before = parts[0]?.oldText ?? null;
    const after = parts.at(-1)?.newText ?? null;
    if (parts.length === 0) continue; // no patch was read (a reader without pathPatch)
    for (const change of changedCheckScripts(entries, before, after)) {
      report.tamper.push({ path: manifest.path, kind: 'check-script', detail: `${change}, and a check runs it` });
    }
  }
  report.notes.push(...findLostAssertions(summaries, isTest));
  return report;
}

/**
 * Why a change to `file` is tamper by its path alone: goald's own file (not the state goald itself rewrites
 * while goals run), a `guard.protect` glob, or neither (null).
 */
export function protectionOf(file: string, input: { goaldPaths: GoaldPaths; protect: readonly string[] }): 'goald' | 'guard.protect' | null {
  if (matchesPathPattern(file, input.goaldPaths.protect) && !matchesPathPattern(file, input.goaldPaths.ignore)) return 'goald';
  return matchesPathPattern(file, input.protect) ? 'guard.protect' : null;
}

// Protected paths (goald's own files, `guard.protect`), goal.config.json and the files a check runs (not
// test files: what the agent may do to those is the test rules'), from the file list alone.
function findPathTamper(input: GuardInput, report: GuardReport, isTest: (file: string) => boolean): void {
  const { goaldPaths, settings } = input;
  const runners = settings.checkScripts ? checkRunners(input.checkCommands, input.workspace, input.checkPath ?? '') : null;
  let configWriter: boolean | null = null;
  for (const file of input.delta.files) {
    if (IGNORE_FILE.test(file.path)) {
      report.notes.push({ path: file.path, kind: 'ignore-change', detail: `${verbOf(file)} since the goal started: a file it ignores is in no snapshot, diff or inspection` });
    }
    if (file.path === WORKSPACE_CONFIG_FILE) {
      configWriter ??=
        agentWroteConfig(input.toolCalls, input.workspace) || (input.prior?.tamper ?? []).some((finding) => finding.kind === 'config-edit');
      if (configWriter) {
        report.tamper.push({ path: file.path, kind: 'config-edit', detail: `the agent ${verbOf(file)} the goal's config file itself` });
      } else {
        report.notes.push({
          path: file.path,
          kind: 'config-change',
          detail: `${verbOf(file)} since the goal started; nothing shows the agent wrote it, so it is not counted as tamper`,
        });
      }
      continue;
    }
    const protection = protectionOf(file.path, { goaldPaths, protect: settings.protect });
    if (protection !== null) {
      report.tamper.push({ path: file.path, kind: 'protected-path', detail: `${whoseFile(protection)} ${verbOf(file)}` });
    } else if (runners !== null && !isTest(file.path) && checkRuns(runners, file.path)) {
      report.tamper.push({ path: file.path, kind: 'check-script', detail: `a check runs this file, and it was ${verbOf(file)} since the goal started (guard.checkScripts: false allows it)` });
    }
  }
}

function verbOf(file: FileChange): string {
  return { A: 'added', M: 'modified', D: 'deleted', T: 'replaced' }[file.status];
}

// The patch of the test files (changed lines only) and manifests (whole, old and new) in one git process.
async function readPatch(
  input: GuardInput,
  reader: GuardTreeReader,
  paths: string[],
  how: { isTest: (file: string) => boolean; wholeFiles: boolean },
  signal: AbortSignal | undefined,
): Promise<FilePatchSummary[]> {
  if (paths.length === 0 || reader.pathPatch === undefined) return [];
  const scanner = createPatchScanner({ scanLines: how.isTest, keepText: (file) => PACKAGE_MANIFEST.test(file) });
  const contextLines = how.wholeFiles ? WHOLE_FILE_CONTEXT : 0;
  await reader.pathPatch(input.delta.fromTree, input.delta.toTree, paths, scanner.push, { contextLines, ...(signal ? { signal } : {}) });
  return scanner.finish();
}

// The objects behind the judged files on both sides (each tree on the way, and the blob), checked against
// their names: a rewritten one in .git/objects would make the patch above say nothing of an edit.
async function findForgedFiles(input: GuardInput, reader: GuardTreeReader, paths: string[], signal: AbortSignal | undefined): Promise<TamperFinding[]> {
  if (paths.length === 0 || reader.forgedObjects === undefined) return [];
  const reaches = new Map<string, string>();
  for (const file of paths) {
    for (const tree of [input.delta.fromTree, input.delta.toTree]) {
      for (const name of objectNamesOf(tree, file)) if (!reaches.has(name)) reaches.set(name, file);
    }
  }
  const forged = await reader.forgedObjects([...reaches.keys()], signal);
  return [...new Set(forged.map((name) => reaches.get(name) ?? name))].map((file) => ({
    path: file,
    kind: 'forged-object',
    detail: "its object in .git/objects does not hold what its name says: the diff shown for it is not the file",
  }));
}

// Deleted, replaced (a symlink now), or moved: moved to another test file is fine, anywhere else is not.
function describeDeletedTest(file: FileChange, summaries: FilePatchSummary[], isTest: (file: string) => boolean): TamperFinding | null {
  if (file.status === 'T') return { path: file.path, kind: 'deleted-test', detail: 'test file replaced by a symlink or submodule' };
  const blob = summaries.find((entry) => entry.path === file.path && entry.removed)?.oldBlob ?? null;
  const moved = blob === null ? undefined : summaries.find((entry) => entry.created && entry.newBlob === blob && entry.path !== file.path);
  if (moved !== undefined) {
    if (isTest(moved.path)) return null;
    return { path: file.path, kind: 'renamed-test', detail: `test file renamed to ${moved.path}, which no test glob matches` };
  }
  return { path: file.path, kind: 'deleted-test', detail: 'test file deleted' };
}

function findSkipMarkers(summaries: FilePatchSummary[], isTest: (file: string) => boolean): TamperFinding[] {
  const net = new Map<string, Map<string, number>>();
  for (const entry of summaries) {
    if (!isTest(entry.path)) continue;
    const labels = net.get(entry.path) ?? new Map<string, number>();
    for (const [label, count] of entry.markers) labels.set(label, (labels.get(label) ?? 0) + count);
    net.set(entry.path, labels);
  }
  const findings: TamperFinding[] = [];
  for (const [file, labels] of net) {
    const added = [...labels].filter(([, count]) => count > 0).map(([label, count]) => (count === 1 ? label : `${label} ×${count}`));
    if (added.length > 0) findings.push({ path: file, kind: 'skip-marker', detail: `added ${added.join(', ')} to a test file` });
  }
  return findings;
}

// Reported when the test files together lost assertions: one note per file that lost some.
function findLostAssertions(summaries: FilePatchSummary[], isTest: (file: string) => boolean): GuardNote[] {
  const perFile = new Map<string, { added: number; removed: number }>();
  for (const entry of summaries) {
    if (!isTest(entry.path)) continue;
    const counts = perFile.get(entry.path) ?? { added: 0, removed: 0 };
    counts.added += entry.assertionsAdded;
    counts.removed += entry.assertionsRemoved;
    perFile.set(entry.path, counts);
  }
  const total = [...perFile.values()].reduce((sum, counts) => sum + counts.removed - counts.added, 0);
  if (total <= 0) return [];
  return [...perFile]
    .filter(([, counts]) => counts.removed > counts.added)
    .map(([file, counts]) => ({
      path: file,
      kind: 'assertions-removed',
      detail: `${counts.removed} assertions removed, ${counts.added} added (test files: ${total} fewer in all)`,
    }));
}
