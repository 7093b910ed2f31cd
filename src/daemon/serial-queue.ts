// Async work that must not interleave, run one piece at a time in arrival order: each piece starts once
// the one before it settled, and a failure reaches its own caller only, never the work queued after it.

/** A chain of async work run one piece at a time, in arrival order. */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();
  private pending = 0;

  /** Runs `work` once everything queued before it has settled; settles as `work` does. */
  run<T>(work: () => Promise<T>): Promise<T> {
    this.pending += 1;
    const result = this.tail.then(work);
    const settled = (): void => {
      this.pending -= 1;
    };
    this.tail = result.then(settled, settled);
    return result;
  }

  /** Settles once the work queued so far has settled; never rejects. */
  idle(): Promise<void> {
    return this.tail;
  }

  /** No work is queued or running. */
  get isIdle(): boolean {
    return this.pending === 0;
  }
}

/** One SerialQueue per key (a workspace, say): work under different keys runs concurrently. */
export class KeyedSerialQueue<K> {
  private readonly queues = new Map<K, SerialQueue>();

  /** Runs `work` after the work queued under the same key; settles as `work` does. */
  run<T>(key: K, work: () => Promise<T>): Promise<T> {
    let queue = this.queues.get(key);
    if (queue === undefined) {
      queue = new SerialQueue();
      this.queues.set(key, queue);
    }
    const result = queue.run(work);
    const owner = queue;
    // An idle key's queue is dropped, so keys seen once do not accumulate.
    void owner.idle().then(() => {
      if (owner.isIdle && this.queues.get(key) === owner) this.queues.delete(key);
    });
    return result;
  }

  /** Settles once the work queued under `key` so far has settled; never rejects. */
  idle(key: K): Promise<void> {
    return this.queues.get(key)?.idle() ?? Promise.resolve();
  }
}
