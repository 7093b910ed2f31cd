import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.js';
import { ActiveClock } from '../../src/supervisor/active-clock.js';

// A clock the test moves by hand: active time is arithmetic on timestamps, so no real time is needed.
function manualClock(start = 1_000_000): Clock & { advance: (ms: number) => void } {
  let now = start;
  return { now: () => now, sleep: () => Promise.resolve(), advance: (ms) => (now += ms) };
}

describe('ActiveClock', () => {
  it('counts from what a restored goal already had, and leaves paused stretches out', () => {
    const clock = manualClock();
    const active = new ActiveClock(clock, 5_000);
    clock.advance(1_000);
    expect(active.activeMs()).toBe(6_000);
    active.pause();
    clock.advance(60_000);
    expect(active.activeMs()).toBe(6_000);
    active.pause(); // a second pause changes nothing
    active.resume();
    clock.advance(500);
    active.resume(); // nor a second resume
    expect(active.activeMs()).toBe(6_500);
  });

  it('hands out each stretch of active time to one turn boundary only', () => {
    const clock = manualClock();
    const active = new ActiveClock(clock, 2_000);
    clock.advance(300);
    expect(active.takeSinceBoundary()).toBe(300);
    clock.advance(200);
    active.pause();
    clock.advance(10_000);
    expect(active.takeSinceBoundary()).toBe(200);
    expect(active.takeSinceBoundary()).toBe(0);
  });
});
