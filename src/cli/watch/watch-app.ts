// The interactive `goald watch` (ink 6, React 19): draws watch-frame.ts's lines, refreshes them from the
// daemon, and turns keys into the daemon's levers. Written with createElement (no JSX build step). A dead
// terminal never disturbs a goal: the app is only a client of the daemon.

import { Box, Text, useApp, useInput, useStdout, type Key } from 'ink';
import { createElement as h, useCallback, useEffect, useRef, useState, type ReactElement } from 'react';
import { GOAL_KEYS_ON_LOOP, renderFrame, selectedRow, watchRows, type Line, type WatchPrompt } from './watch-frame.js';
import type { WatchSnapshot, WatchSource } from './watch-source.js';

export interface WatchAppProps {
  source: WatchSource;
  /** The goal selected at start (`goald watch <goal>`), or null for the first goal. */
  initialSelectedId: string | null;
  refreshMs: number;
  /** Fixed size (tests); default: the terminal's. */
  width?: number;
  height?: number;
}

/** One frame line as ink text. */
function LineView({ line }: { line: Line }): ReactElement {
  return h(
    Text,
    { wrap: 'truncate' },
    ...line.map((segment, index) =>
      h(Text, { key: index, ...(segment.color ? { color: segment.color } : {}), bold: segment.bold === true, inverse: segment.inverse === true }, segment.text),
    ),
  );
}

/** The watch view: the list of goals and loops, detail pane, hint line; keys as the hint says. */
export function WatchApp(props: WatchAppProps): ReactElement {
  const { source, refreshMs } = props;
  const { exit } = useApp();
  const { stdout } = useStdout();
  const [snapshot, setSnapshot] = useState<WatchSnapshot | null>(null);
  const [selectedId, setSelectedId] = useState<string | null>(props.initialSelectedId);
  const [prompt, setPromptState] = useState<WatchPrompt | null>(null);
  // Keys can arrive faster than renders: the handler reads and writes the prompt through a ref.
  const promptRef = useRef<WatchPrompt | null>(null);
  const setPrompt = (next: WatchPrompt | null): void => {
    promptRef.current = next;
    setPromptState(next);
  };
  const [message, setMessage] = useState<string | null>(null);
  const [showLog, setShowLog] = useState(false);
  const selectedRef = useRef(selectedId);
  selectedRef.current = selectedId;

  // One read at a time (a slow daemon must not pile up overlapping refreshes); one asked for meanwhile (a
  // new selection, a lever's answer) runs as soon as the current one is in.
  const loading = useRef(false);
  const again = useRef(false);
  const refresh = useCallback(async (): Promise<void> => {
    if (loading.current) {
      again.current = true;
      return;
    }
    loading.current = true;
    try {
      const next = await source.load(selectedRef.current);
      setSnapshot(next);
      const rows = watchRows(next.goals, next.loops);
      if (!rows.some((row) => row.view.id === selectedRef.current)) setSelectedId(selectedRow(rows, null)?.view.id ?? null);
    } catch (error) {
      setMessage(error instanceof Error ? error.message : String(error));
    } finally {
      loading.current = false;
    }
    if (again.current) {
      again.current = false;
      await refresh();
    }
  }, [source]);

  useEffect(() => {
    void refresh();
    const timer = setInterval(() => void refresh(), refreshMs);
    return () => clearInterval(timer);
  }, [refresh, refreshMs, selectedId]);

  const act = (action: Promise<string>): void => {
    action.then(
      (text) => setMessage(text),
      (error: unknown) => setMessage(error instanceof Error ? error.message : String(error)),
    ).finally(() => void refresh());
  };

  const goals = snapshot?.goals ?? [];
  const loops = snapshot?.loops ?? [];
  const rows = watchRows(goals, loops);
  const current = selectedRow(rows, selectedId);
  const index = current === undefined ? 0 : rows.indexOf(current);

  // One stable handler for ink (it re-attaches to stdin whenever the handler changes), reading the
  // latest render's state through a ref.
  const onInput = useRef<(input: string, key: Key) => void>(() => undefined);
  useInput(useCallback((input: string, key: Key) => onInput.current(input, key), []));
  onInput.current = (input, key) => {
    const prompt = promptRef.current;
    if (prompt?.kind === 'guidance') {
      if (key.escape) setPrompt(null);
      else if (key.return) {
        setPrompt(null);
        if (prompt.text.trim() !== '') act(source.say(prompt.goalId, prompt.text));
      } else if (key.backspace || key.delete) setPrompt({ ...prompt, text: prompt.text.slice(0, -1) });
      else if (input !== '' && !key.ctrl && !key.meta) setPrompt({ ...prompt, text: prompt.text + input });
      return;
    }
    if (prompt?.kind === 'confirm-stop') {
      setPrompt(null);
      if (input === 's') act(prompt.what === 'goal' ? source.stop(prompt.id) : source.stopLoop(prompt.id));
      else setMessage('stop cancelled');
      return;
    }
    if (key.ctrl && input === 'c') {
      exit();
      return;
    }
    if (key.upArrow) setSelectedId(rows[Math.max(0, index - 1)]?.view.id ?? null);
    else if (key.downArrow) setSelectedId(rows[Math.min(rows.length - 1, index + 1)]?.view.id ?? null);
    // Keys typed quickly arrive in one read: each is its own command (a prompt takes the rest on its next read).
    else for (const char of input) onKey(char);
  };

  // One command key on the selected row (`selected` moves as j/k are read, within one read too).
  let selected = index;
  function onKey(char: string): void {
    const row = rows[selected];
    if (char === 'q') exit();
    else if (char === 'k' || char === 'j') {
      selected = char === 'k' ? Math.max(0, selected - 1) : Math.min(rows.length - 1, selected + 1);
      setSelectedId(rows[selected]?.view.id ?? null);
    } else if (row === undefined) return;
    else if (row.kind === 'loop') onLoopKey(char, row.view.id);
    else onGoalKey(char, row.view.id);
  }

  // A loop's levers: r fires it now, s stops it (after a second s); a goal's other keys say what they act on.
  function onLoopKey(char: string, loopId: string): void {
    if (char === 'r') act(source.runLoop(loopId));
    else if (char === 's') setPrompt({ kind: 'confirm-stop', what: 'loop', id: loopId });
    else if ('pPgl'.includes(char)) setMessage(GOAL_KEYS_ON_LOOP);
  }

  function onGoalKey(char: string, goalId: string): void {
    if (char === 'p') act(source.pause(goalId, false));
    else if (char === 'P') act(source.pause(goalId, true));
    else if (char === 'r') act(source.resume(goalId));
    else if (char === 's') setPrompt({ kind: 'confirm-stop', what: 'goal', id: goalId });
    else if (char === 'g') setPrompt({ kind: 'guidance', goalId, text: '' });
    else if (char === 'l') setShowLog((shown) => !shown);
  }

  const width = props.width ?? stdout.columns ?? 100;
  // One row short of the terminal: a frame as tall as the screen makes ink clear the whole terminal on
  // every render (flicker), and on quit the line after the last frame stays in view.
  const height = props.height ?? Math.max(1, (stdout.rows ?? 31) - 1);
  const lines =
    snapshot === null
      ? [[{ text: 'goald watch: connecting to the daemon…' }]]
      : renderFrame({ goals, loops, selectedId: current?.view.id ?? null, width, height, logLines: showLog ? snapshot.logLines : null, prompt, message });
  return h(Box, { flexDirection: 'column' }, ...lines.map((line, row) => h(LineView, { key: row, line })));
}
