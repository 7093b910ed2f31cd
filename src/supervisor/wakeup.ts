// A reusable wake-up signal: the supervisor's loop waits on `next()`, control calls (pause, resume,
// stop) call `wake()` so a cool-down or a pause ends at once instead of at its timer.

export class Wakeup {
  private resolvers: (() => void)[] = [];

  /** A promise that resolves at the next wake(). */
  next(): Promise<void> {
    return new Promise((resolve) => this.resolvers.push(resolve));
  }

  /** Resolves every pending next(). */
  wake(): void {
    const pending = this.resolvers;
    this.resolvers = [];
    for (const resolve of pending) resolve();
  }
}
