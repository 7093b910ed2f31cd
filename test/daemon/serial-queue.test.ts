import { describe, expect, test } from 'vitest';
import { KeyedSerialQueue, SerialQueue } from '../../src/daemon/serial-queue.js';
import { deferred } from '../helpers/deferred.js';

// Lets every pending promise callback run.
function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe('SerialQueue', () => {
  test('runs work one piece at a time, in arrival order, each with its own result', async () => {
    const queue = new SerialQueue();
    const started: string[] = [];
    const gates = { a: deferred(), b: deferred(), c: deferred() };
    const run = (name: keyof typeof gates) =>
      queue.run(async () => {
        started.push(name);
        await gates[name].promise;
        return `${name} done`;
      });
    const results = [run('a'), run('b'), run('c')];

    await flush();
    expect(started).toEqual(['a']);
    gates.b.resolve(); // b may not start before a settled, however early its own gate opens
    await flush();
    expect(started).toEqual(['a']);
    gates.a.resolve();
    await flush();
    expect(started).toEqual(['a', 'b', 'c']);
    gates.c.resolve();
    await expect(Promise.all(results)).resolves.toEqual(['a done', 'b done', 'c done']);
  });

  test('a failure reaches its own caller only; the work after it still runs', async () => {
    const queue = new SerialQueue();
    const failing = queue.run(async () => {
      throw new Error('boom');
    });
    const next = queue.run(async () => 'next ran');
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next ran');
  });

  test('idle settles once the work queued so far has settled, without rejecting for a failure', async () => {
    const queue = new SerialQueue();
    expect(queue.isIdle).toBe(true);
    const gate = deferred();
    const failing = queue.run(async () => {
      await gate.promise;
      throw new Error('boom');
    });
    failing.catch(() => undefined);
    let idle = false;
    void queue.idle().then(() => (idle = true));
    await flush();
    expect(idle).toBe(false);
    expect(queue.isIdle).toBe(false);
    gate.resolve();
    await queue.idle();
    expect(idle).toBe(true);
    expect(queue.isIdle).toBe(true);
  });
});

describe('KeyedSerialQueue', () => {
  test('work under one key is serialized; work under another key runs meanwhile', async () => {
    const queue = new KeyedSerialQueue<string>();
    const started: string[] = [];
    const gate = deferred();
    const first = queue.run('/a', async () => {
      started.push('a1');
      await gate.promise;
    });
    const second = queue.run('/a', async () => {
      started.push('a2');
    });
    const other = queue.run('/b', async () => {
      started.push('b1');
    });
    await other;
    expect(started).toEqual(['a1', 'b1']);
    gate.resolve();
    await Promise.all([first, second]);
    expect(started).toEqual(['a1', 'b1', 'a2']);
  });

  test('a failure under a key does not stop that key’s later work', async () => {
    const queue = new KeyedSerialQueue<string>();
    const failing = queue.run('/a', async () => {
      throw new Error('invalid config');
    });
    const next = queue.run('/a', async () => 'applied');
    await expect(failing).rejects.toThrow('invalid config');
    await expect(next).resolves.toBe('applied');
  });

  test('idle waits for the key’s queued work; a key with none is idle at once', async () => {
    const queue = new KeyedSerialQueue<string>();
    await queue.idle('/never-used');
    const gate = deferred();
    let finished = false;
    void queue.run('/a', async () => {
      await gate.promise;
      finished = true;
    });
    const idle = queue.idle('/a');
    await flush();
    expect(finished).toBe(false);
    gate.resolve();
    await idle;
    expect(finished).toBe(true);
    // Work queued after the key went idle (and its queue was dropped) still runs in order.
    const order: number[] = [];
    await Promise.all([queue.run('/a', async () => order.push(1)), queue.run('/a', async () => order.push(2))]);
    expect(order).toEqual([1, 2]);
  });
});
