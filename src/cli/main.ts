// The CLI entry: parses arguments (commander), loads each command lazily so `--help` stays fast, and is
// the single catch that turns errors into a one-line message and a documented exit code (report-error.ts,
// which the commander-free fast path of bin.ts shares).

import { Command, CommanderError, Option } from 'commander';
import { EDIT_OPTIONS } from '../config/edit-options.js';
import { START_COMMAND_SWITCHES, START_OPTIONS, type StartOption } from '../config/start-options.js';
import { EXIT, GoaldError } from '../errors.js';
import { processIO, type CliIO } from './io.js';
import { reportGoaldError } from './report-error.js';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** The commander option for one row of the start options' table. */
function toCommanderOption(option: StartOption): Option {
  const names = option.short === undefined ? option.flag : `${option.short}, ${option.flag}`;
  const placeholder = 'placeholder' in option ? ` ${option.placeholder}` : '';
  const made = new Option(`${names}${placeholder}`, option.description);
  if (option.kind === 'value' && option.choices !== undefined) made.choices(option.choices);
  if (option.kind === 'list') made.argParser(collect).default([]);
  return made;
}

/** Adds the goal options shared by `start` and `loop` (config/start-options.ts). */
function addStartOptions(command: Command): Command {
  for (const option of START_OPTIONS) command.addOption(toCommanderOption(option));
  return command;
}

/** What `goald start` does with the arguments commander read (its raw options, as the action receives them). */
export type StartAction = (condition: string | undefined, options: Record<string, unknown>) => Promise<number>;

/**
 * The whole CLI as commander reads it; `runStart` replaced only by the test that holds the commander-free
 * reading of `goald start` (start-args.ts) to this one.
 */
export function buildProgram(io: CliIO, exit: { code: number }, runStart: StartAction = runStartCommandFor(io)): Command {
  const program = new Command('goald')
    .description('Keeps a coding agent working until a goal is verifiably met.')
    .version('0.1.0', '-v, --version')
    .exitOverride()
    // `goald loop list --json`: options after a subcommand belong to the subcommand, not to `loop`.
    .enablePositionalOptions()
    .configureOutput({
      writeOut: (text) => io.out(text.replace(/\n$/, '')),
      writeErr: (text) => io.err(text.replace(/\n$/, '')),
      outputError: () => undefined, // the single catch below prints errors
    });

  const start = addStartOptions(
    program
      .command('start')
      .description('start a goal: run the agent turn after turn until the condition is verifiably met')
      .argument('[condition]', 'the goal in plain words, e.g. "all tests pass" (default: goal from goal.config.json)'),
  );
  for (const option of START_COMMAND_SWITCHES) start.option(option.flag, option.description);
  start.action(async (condition: string | undefined, options: Record<string, unknown>) => {
    exit.code = await runStart(condition, options);
  });

  program
    .command('status')
    .description('show active goals, or one goal in detail')
    .argument('[goal]', 'goal id or unique prefix (default: the one active in this workspace)')
    .option('--json', 'print JSON')
    .action(async (goal: string | undefined, options: { json?: boolean }) => {
      const { runStatus } = await import('./commands/control.js');
      exit.code = await runStatus(goal, options, io);
    });
  program
    .command('pause')
    .description('pause a goal at the end of its current turn (--now: suspend the agent immediately)')
    .argument('[goal]', 'goal id or unique prefix')
    .option('--now', 'suspend the agent process group now (SIGSTOP)')
    .action(async (goal: string | undefined, options: { now?: boolean }) => {
      const { runPause } = await import('./commands/control.js');
      exit.code = await runPause(goal, options, io);
    });
  program
    .command('resume')
    .description('resume a paused goal')
    .argument('[goal]', 'goal id or unique prefix')
    .action(async (goal: string | undefined) => {
      const { runResume } = await import('./commands/control.js');
      exit.code = await runResume(goal, io);
    });
  program
    .command('stop')
    .description('stop a goal: kill its agent and record it as failed (stopped)')
    .argument('[goal]', 'goal id or unique prefix')
    .action(async (goal: string | undefined) => {
      const { runStop } = await import('./commands/control.js');
      exit.code = await runStop(goal, io);
    });
  program
    .command('watch')
    .description('a live view of every goal: list, detail pane, and keys to pause, resume, stop and guide them')
    .argument('[goal]', 'goal or loop id (or unique prefix) to select first')
    .option('--once', 'print one frame and exit')
    .action(async (goal: string | undefined, options: { once?: boolean }) => {
      const { runWatch } = await import('./commands/watch.js');
      exit.code = await runWatch(goal, options, io);
    });
  program
    .command('say')
    .description("guidance for a running goal: its next turn's prompt carries it (the condition and checks stay as they are)")
    .argument('<goal>', 'goal id or unique prefix')
    .argument('<text>', 'what to tell the agent, at most 2 000 characters')
    .option('--json', 'print JSON')
    .action(async (goal: string, text: string, options: { json?: boolean }) => {
      const { runSay } = await import('./commands/say.js');
      exit.code = await runSay(goal, text, options, io);
    });
  const edit = program
    .command('edit')
    .description("change a goal's limits, checks or evaluator from its next turn; --resume reopens a goal that failed on a budget")
    .argument('<goal>', 'goal id or unique prefix');
  for (const option of EDIT_OPTIONS) edit.addOption(toCommanderOption(option));
  edit
    .option('--apply-config', "apply the workspace's goal.config.json edit that goald held (it was made while a turn ran)")
    .option('--resume', 'reopen a goal that failed on max-turns, token-budget, cost-budget or wall-clock, with that limit raised')
    .option('--json', 'print JSON')
    .action(async (goal: string, options: Record<string, unknown>) => {
      const { runEdit } = await import('./commands/edit.js');
      exit.code = await runEdit(goal, options, io);
    });
  program
    .command('rollback')
    .description("put a paused or finished goal's files back as turn n left them (only the files the goal changed)")
    .argument('<goal>', 'goal id or unique prefix')
    .option('--to-turn <n>', 'the turn whose files to restore (0: before the first turn)')
    .option('--json', 'print JSON')
    .action(async (goal: string, options: { toTurn?: string; json?: boolean }) => {
      const { runRollback } = await import('./commands/rollback.js');
      exit.code = await runRollback(goal, options, io);
    });
  program
    .command('logs')
    .description("print a goal's progress; -f follows it live")
    .argument('[goal]', 'goal id or unique prefix')
    .option('-f, --follow', 'keep printing until the goal finishes')
    .option('--json', 'print one JSON event per line')
    .action(async (goal: string | undefined, options: { follow?: boolean; json?: boolean }) => {
      const { runLogs } = await import('./commands/history.js');
      exit.code = await runLogs(goal, options, io);
    });
  program
    .command('history')
    .description('list all goals, oldest first')
    .option('--json', 'print JSON')
    .option('--loop <loop>', "only the runs of this loop")
    .action(async (options: { json?: boolean; loop?: string }) => {
      const { runHistory } = await import('./commands/history.js');
      exit.code = await runHistory(options, io);
    });
  program
    .command('show')
    .description('show one goal with a row per turn')
    .argument('<goal>', 'goal id or unique prefix')
    .option('--json', 'print JSON')
    .option('--receipt', 'a receipt of every turn (trees, patch ids, checks, verdicts, tokens, cost), stable enough for a pull request')
    .addOption(new Option('--format <format>', 'the receipt as Markdown or JSON (default md)').choices(['md', 'json']))
    .action(async (goal: string, options: { json?: boolean; receipt?: boolean; format?: 'md' | 'json' }) => {
      const { runShow } = await import('./commands/history.js');
      exit.code = await runShow(goal, options, io);
    });

  const loop = addStartOptions(
    program
      .command('loop')
      .description('rerun a goal on a schedule: a duration (30m, 2h) or a 5-field cron expression')
      .argument('[every]', 'e.g. 30m, 2h, 1d, or "0 9 * * 1-5"')
      .argument('[condition]', 'the goal of each run (default: goal from goal.config.json)'),
  )
    .addOption(new Option('--catch-up <policy>', 'after downtime, run a missed slot once or skip it').choices(['once', 'skip']))
    .enablePositionalOptions()
    .action(async (every: string | undefined, condition: string | undefined, options: Record<string, unknown>) => {
      if (every === undefined) throw new GoaldError('usage', 'goald loop needs a schedule', 'e.g. goald loop 30m "the tests pass" --check "npm test"');
      const { runLoopCreate } = await import('./commands/loop.js');
      exit.code = await runLoopCreate(every, condition, options, io);
    });
  loop
    .command('list')
    .description('list loops: schedule, condition, last run and outcome, next run, runs so far')
    .option('--json', 'print JSON')
    .option('--all', 'include stopped loops')
    .action(async (options: { json?: boolean; all?: boolean }) => {
      const { runLoopList } = await import('./commands/loop.js');
      exit.code = await runLoopList(options, io);
    });
  loop
    .command('stop')
    .description('stop a loop (its runs stay in history)')
    .argument('<loop>', 'loop id or unique prefix')
    .action(async (ref: string) => {
      const { runLoopStop } = await import('./commands/loop.js');
      exit.code = await runLoopStop(ref, io);
    });
  loop
    .command('sync')
    .description("read the loops declared in this workspace's goal.config.json now (the daemon then watches it)")
    .option('-C, --dir <dir>', 'the workspace (default: the current directory)')
    .option('--json', 'print JSON')
    .action(async (options: { dir?: string; json?: boolean }) => {
      const { runLoopSync } = await import('./commands/loop.js');
      exit.code = await runLoopSync(options, io);
    });
  loop
    .command('run')
    .description('fire a loop now')
    .argument('<loop>', 'loop id or unique prefix')
    .action(async (ref: string) => {
      const { runLoopRun } = await import('./commands/loop.js');
      exit.code = await runLoopRun(ref, io);
    });

  program
    .command('worker')
    .description('run turns of a cluster\'s goals (GOALD_REDIS_URL), until SIGTERM')
    .option('--concurrency <n>', 'turns at once on this machine', '1')
    .option('--dir <path>', 'where the worker keeps its mirrors, worktrees and transcripts (default: GOALD_HOME/worker)')
    .option('--lock-duration <duration>', "how long a turn's lock holds without renewal; a frozen worker's turn goes elsewhere after it (default 30s)")
    .option('--stalled-interval <duration>', "how often lost turns are looked for (default 30s)")
    .action(async (options: { concurrency?: string; dir?: string; lockDuration?: string; stalledInterval?: string }) => {
      const { runWorkerCommand } = await import('./commands/worker.js');
      exit.code = await runWorkerCommand(options, io);
    });

  const daemon = program
    .command('daemon')
    .description('run the per-user daemon (started automatically by commands that need it)')
    .option('--foreground', 'run in this process (for systemd/launchd)')
    .option('--log-file <path>', 'with --foreground: write the log to this file, rotated at 5 MB (default: stderr)')
    .action(async (options: { foreground?: boolean; logFile?: string }) => {
      const { runDaemonCommand } = await import('./commands/daemon.js');
      exit.code = await runDaemonCommand(options, io);
    });
  daemon
    .command('stop')
    .description('stop the daemon cleanly (active goals resume when it next starts)')
    .action(async () => {
      const { runDaemonStop } = await import('./commands/daemon.js');
      exit.code = await runDaemonStop(io);
    });
  daemon
    .command('status')
    .description('is the daemon running?')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { runDaemonStatus } = await import('./commands/daemon.js');
      exit.code = await runDaemonStatus(options, io);
    });
  daemon
    .command('install')
    .description('write a systemd user unit (Linux) or a launchd agent (macOS)')
    .action(async () => {
      const { runDaemonInstall } = await import('./commands/daemon.js');
      exit.code = await runDaemonInstall(io);
    });

  const race = program
    .command('race')
    .description('race several agents on one goal, each in its own worktree; pick the first or the best that achieves it')
    .argument('[condition]', 'the goal in plain words (default: goal from goal.config.json)');
  // The start options but --agent/--adapter (a race takes several) and those a race decides itself.
  for (const option of START_OPTIONS) if (!['agent', 'adapter', 'worktree', 'queue'].includes(option.key)) race.addOption(toCommanderOption(option));
  race
    .option('--agent <cmd|adapter>', 'a contender: an adapter name (claude-code, codex, gemini, aider, builtin) or a shell command (repeatable)', collect, [])
    .option('--n <k>', 'members (default: one per --agent; the agents take turns)')
    .addOption(new Option('--pick <how>', 'first: the first to achieve wins, the others stop; best: all finish, the evaluator compares').choices(['first', 'best']).default('first'))
    .option('--foreground', 'run the race in this process, not the daemon; exit 0 when a member is picked, 1 when none achieved')
    .option('--wait', "wait for the race's end; exit 0 when a member was picked, 1 when none achieved")
    .action(async (condition: string | undefined, options: Record<string, unknown>) => {
      const { runRace } = await import('./commands/race.js');
      exit.code = await runRace(condition, options, io);
    });

  program
    .command('diff')
    .description("show a worktree goal's changes: its branch since it started, or one turn's commit")
    .argument('<goal>', 'goal id or unique prefix')
    .option('--turn <n>', "only this turn's commit")
    .action(async (goal: string, options: Record<string, unknown>) => {
      const { runDiff } = await import('./commands/worktree.js');
      exit.code = await runDiff(goal, options, io);
    });
  program
    .command('apply')
    .description("merge an achieved worktree goal's branch into your current branch (fast-forward or a merge commit)")
    .argument('<goal>', 'goal id or unique prefix')
    .option('-C, --dir <dir>', 'the checkout to apply it to (default: the current directory)')
    .option('--pr', 'open a pull request with gh pr create instead (the command line is shown)')
    .option('--json', 'print JSON')
    .action(async (goal: string, options: Record<string, unknown>) => {
      const { runApply } = await import('./commands/worktree.js');
      exit.code = await runApply(goal, options, io);
    });

  program
    .command('prune')
    .description('delete finished goals (records, transcripts, snapshot objects) beyond the limits; prints what it freed')
    .option('--older-than <dur>', 'only goals that finished longer ago than this', '30d')
    .option('--keep <n>', 'keep the n most recently finished goals whatever their age', '10')
    .option('--dry-run', 'say what would be deleted, delete nothing')
    .option('--json', 'print JSON')
    .action(async (options: Record<string, unknown>) => {
      const { runPrune } = await import('./commands/prune.js');
      exit.code = await runPrune(options, io);
    });

  program
    .command('sandbox')
    .description("the bubblewrap sandbox around agent turns and checks")
    .command('check')
    .description('does bwrap work here, which mode would a goal run under, and what would a turn see')
    .option('-C, --dir <dir>', 'the workspace (default: the current directory)')
    .option('--agent <cmd>', 'as goald start: the agent command (its CLI profile)')
    .option('--adapter <name>', 'as goald start: the structured adapter (its CLI profile)')
    .option('--no-sandbox', 'as goald start: the sandbox off')
    .option('--json', 'print JSON')
    .action(async (options: Record<string, unknown>) => {
      const { runSandboxCheck } = await import('./commands/sandbox.js');
      exit.code = await runSandboxCheck(options, io);
    });

  program
    .command('ui')
    .description('the web dashboard, served by the daemon on 127.0.0.1: prints its one-time link and opens a browser')
    .option('--port <n>', 'listen on this port (default: a free one)')
    .option('--no-open', 'print the link only; never start a browser')
    .option('--json', 'print JSON')
    .action(async (options: { port?: string; open?: boolean; json?: boolean }) => {
      const { runUi } = await import('./commands/ui.js');
      exit.code = await runUi(options, io);
    });

  program
    .command('notify')
    .description("notifications (the notify section of your config.json)")
    .command('test')
    .description('send a sample notification through every configured channel and say how each did')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { runNotifyTest } = await import('./commands/notify.js');
      exit.code = await runNotifyTest(options, io);
    });

  program
    .command('state')
    .description('maintenance of the state file')
    .command('restore')
    .description('replace a corrupt state.json with state.json.bak (the replaced file is kept)')
    .action(async () => {
      const { runStateRestore } = await import('./commands/state.js');
      exit.code = await runStateRestore(io);
    });

  return program;
}

function runStartCommandFor(io: CliIO): StartAction {
  return async (condition, options) => {
    const { runStartCommand } = await import('./commands/start.js');
    return runStartCommand(condition, options, io);
  };
}

/** Runs the CLI and resolves with the exit code; never exits the process itself. */
export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  const exit = { code: EXIT.ok as number };
  const program = buildProgram(io, exit);
  try {
    await program.parseAsync(argv);
    return exit.code;
  } catch (error) {
    return reportError(error, io);
  }
}

function reportError(error: unknown, io: CliIO): number {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0) {
      return EXIT.ok;
    }
    // One line, like every other error: commander puts its "(Did you mean --max-turns?)" on a second one.
    const message = error.message.replace(/^error: /, '').replace(/\s*\n\s*/g, ' ');
    io.err(`goald: ${message} (see goald --help)`);
    return EXIT.usage;
  }
  return reportGoaldError(error, io);
}
