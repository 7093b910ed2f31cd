import { describe, expect, it } from 'vitest';
import { jsonSchema, toJson } from '../../state/json.js';

describe('toJson', () => {
  it('gives the value as it reads back from disk', () => {
    const value = { a: 1, skip: undefined, nan: Number.NaN, when: new Date(0), list: [1, undefined, 'x'], nested: { ok: true } };
    expect(toJson(value)).toEqual({ a: 1, nan: null, when: '1970-01-01T00:00:00.000Z', list: [1, null, 'x'], nested: { ok: true } });
    expect(jsonSchema.safeParse(toJson(value)).success).toBe(true);
  });

  it('returns a copy, not the value itself', () => {
    const value = { list: [1, 2] };
    const copy = toJson(value);
    value.list.push(3);
    expect(copy).toEqual({ list: [1, 2] });
  });

  it('refuses a value with no JSON form', () => {
    expect(() => toJson(undefined)).toThrow(TypeError);
    expect(() => toJson(() => 1)).toThrow(TypeError);
  });
});

describe('jsonSchema', () => {
  it('accepts every JSON value and rejects what JSON cannot hold', () => {
    for (const value of [null, true, 0, -1.5, '', 'x', [], {}, [1, 'a', null, { b: [false] }], { a: { b: { c: [] } } }]) {
      expect(jsonSchema.safeParse(value).success, JSON.stringify(value)).toBe(true);
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const value of [undefined, Number.NaN, Number.POSITIVE_INFINITY, () => 1, new Date(0), { nested: [undefined] }, { n: Number.NaN }, 1n, Symbol('s'), cyclic, new Map()]) {
      expect(jsonSchema.safeParse(value).success, String(typeof value)).toBe(false);
    }
  });

  it('says what was wrong', () => {
    const result = jsonSchema.safeParse({ n: Number.NaN });
    expect(result.error?.issues[0]?.message).toBe('expected a JSON value');
  });
});
