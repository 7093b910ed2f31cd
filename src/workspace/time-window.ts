// When an agent ran, as the guard's looks at files no snapshot holds use it: a file whose ctime falls in a
// window was changed by the agent's turn (checks run outside them).

/**
 * When an agent ran, in epoch milliseconds: from a ctime the kernel stamped just before its release (files
 * are stamped from a clock that may lag the wall clock by a tick; supervisor/agent-windows.ts) to the
 * wall clock once its process group has ended.
 */
export interface TimeWindow {
  from: number;
  to: number;
}

/** Whether a ctime falls in one of the windows. */
export function withinWindows(ctimeMs: number, windows: readonly TimeWindow[]): boolean {
  return windows.some((window) => ctimeMs >= window.from && ctimeMs <= window.to);
}
