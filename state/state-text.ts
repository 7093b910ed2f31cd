// The text state.json is written as, and the checks it passes first: secrets redacted, every record
// validated as it will read back (after a JSON round trip), and the secret guard. state.json holds every
// goal the home ever ran, finished ones included, while an update changes one or two: checking the whole
// file each time made every write cost O(history) (130 ms a write at 1 000 goals, three writes a turn).
// So each goal and loop is checked once per content: its result is kept under its compact JSON (the record
// before redaction) while the secrets in force stay the same, and reused by the next write. A process's
// first write starts from the state it has just read, which the schema passed as it was read: such a
// record, unchanged, is only scanned as text (no secret of this process's environment in it, no key the
// guard refuses), not validated and walked again, and its text is the file's own rather than pretty-printed
// anew (JSON.stringify with indentation is its slow path). Together: 17 ms of a CLI's start with 32 goals
// in the home, and growing with the home's history.
//
// The text is byte for byte `JSON.stringify(redacted, null, 2)` plus a newline (diffable, greppable): the
// records' pretty forms are made one by one and joined as JSON.stringify would indent them.

import { GoaldError } from '../src/errors.js';
import { envEntriesNamed, isSecretName, jsonSecretTest, redactJson } from '../src/secrets/redact.js';
import { findSecretInState, stateSecretTest } from './secret-guard.js';
import { describeSchemaProblem, goalRecordSchema, loopRecordSchema, stateFileSchema } from './state-schema.js';
import type { GoalRecord, LoopRecord, StateFile } from './types.js';

/** A record already redacted, validated and scanned: its pretty text (at its depth in the file) and its parsed form. */
interface CheckedRecord {
  text: string;
  parsed: unknown;
}

/** What a write would put on disk: the text, and the state it reads back as. */
export interface StateText {
  text: string;
  state: StateFile;
  /**
   * The text is one this builder wrote, as the note beside the file says (state-seal.ts): in its layout, each
   * record's slice of it that record's text, so that need not be settled again (#isWholeFileClean).
   */
  vouched?: boolean;
}

// The records' arrays sit two levels deep: `{ "goals": [ <record> ] }`.
const RECORD_INDENT = '\n    ';
const TOP_INDENT = '\n  ';

/** One build: its text and state, and its parts (to replace one goal's without checking the rest again). */
interface Built extends StateText {
  /** `key` null: a record taken whole from the file (buildWithAddedGoal), its key never needed so far. */
  goals: Array<{ key: string | null; record: CheckedRecord }>;
  loops: CheckedRecord[];
  /** The top's fields in order: their text, or null where the goals' and loops' arrays go. */
  top: Array<{ key: string; text: string | null }>;
}

/** Builds state.json's text from a state, remembering the records it checked for the next build. */
export class StateTextBuilder {
  readonly #path: string;
  readonly #env: NodeJS.ProcessEnv;
  #checked = new Map<string, CheckedRecord>();
  #secretsSeen = '';
  #last: Built | null = null;
  /** How many records the last build had to check (the rest came from the one before): for tests. */
  lastChecked = 0;

  /** The last build's text (null before the first). */
  get lastText(): string | null {
    return this.#last?.text ?? null;
  }

  /** `path`: the file the text is for (named in errors); `env`: whose secrets are redacted and refused. */
  constructor(path: string, env: NodeJS.ProcessEnv) {
    this.#path = path;
    this.#env = env;
  }

  /**
   * The text and its parsed state; throws GoaldError('internal') for a state that must not be written.
   * `validated`: the file this write replaces, its text and the state parseStateText returned for it (never
   * mutated); its records that `state` holds unchanged need no schema pass (see the top of this file).
   */
  build(state: StateFile, validated?: StateText): StateText {
    this.#noteSecrets();
    const previous = this.#checked;
    const next = new Map<string, CheckedRecord>();
    const adopt = validated === undefined ? null : this.#adopter(validated);
    this.lastChecked = 0;
    const checkAll = (records: readonly unknown[], field: 'goals' | 'loops'): Array<{ key: string; record: CheckedRecord }> =>
      records.map((record, index) => {
        const key = `${field}:${JSON.stringify(record)}`;
        const known = next.get(key) ?? previous.get(key) ?? adopt?.(key) ?? this.#check(record, [field, index], field);
        next.set(key, known);
        return { key, record: known };
      });
    const goals = checkAll(state.goals, 'goals');
    const loops = checkAll(state.loops, 'loops').map((loop) => loop.record);

    // Everything else at the top (the version, and fields a later goald may add) is checked as a whole,
    // with the records' arrays left empty (so in their place: JSON.stringify keeps the object's key order).
    const top = redactJson({ ...state, goals: [], loops: [] }, this.#env);
    const topReadBack = JSON.parse(JSON.stringify(top)) as StateFile;
    const parsedTop = stateFileSchema.safeParse(topReadBack);
    if (!parsedTop.success) throw this.#invalid(describeSchemaProblem(parsedTop.error));
    this.#guard(top, []);
    const fields = Object.entries(top).flatMap(([key, value]): Built['top'] => {
      if (key === 'goals' || key === 'loops') return [{ key, text: null }];
      const text = JSON.stringify(value, null, 2);
      return text === undefined ? [] : [{ key, text: text.replaceAll('\n', TOP_INDENT) }];
    });
    const parsed: StateFile = { ...topReadBack, goals: goals.map((goal) => goal.record.parsed as GoalRecord), loops: loops.map((loop) => loop.parsed as LoopRecord) };
    this.#checked = next;
    return this.#keep({ goals, loops, top: fields, state: parsed, text: '' });
  }

  /**
   * The last build with its goal at `index` replaced by `goal`: only that record is checked. Null when
   * there is no last build to start from, or the secrets in force changed since (build the whole state).
   */
  buildWithGoal(index: number, goal: GoalRecord): StateText | null {
    const last = this.#last;
    if (last === null || index < 0 || index >= last.goals.length || this.#noteSecrets()) return null;
    this.lastChecked = 0;
    const key = `goals:${JSON.stringify(goal)}`;
    const record = this.#checked.get(key) ?? this.#check(goal, ['goals', index], 'goals');
    const replaced = last.goals[index]?.key ?? null;
    if (replaced !== null && !last.goals.some((other, at) => at !== index && other.key === replaced)) this.#checked.delete(replaced);
    this.#checked.set(key, record);
    const goals = last.goals.with(index, { key, record });
    return this.#keep({ ...last, goals, state: { ...last.state, goals: last.state.goals.with(index, record.parsed as GoalRecord) }, text: '' });
  }

  /**
   * The file `validated` (what the store read under its lock) with `goal` added at the end: only that record
   * is checked, and the others keep their text (a registration then costs the same with a thousand
   * finished goals in the home as with none). Null when the file is not one to take whole (see
   * #isWholeFileClean): build the whole state instead.
   */
  buildWithAddedGoal(validated: StateText, goal: GoalRecord): StateText | null {
    this.#noteSecrets();
    const base = this.#last !== null && this.#last.text === validated.text ? this.#last : this.#takeWhole(validated);
    if (base === null) return null;
    this.lastChecked = 0;
    const key = `goals:${JSON.stringify(goal)}`;
    const record = this.#checked.get(key) ?? this.#check(goal, ['goals', base.goals.length], 'goals');
    this.#checked.set(key, record);
    const state: StateFile = { ...base.state, goals: [...base.state.goals, record.parsed as GoalRecord] };
    return this.#keep({ ...base, goals: [...base.goals, { key, record }], state, text: '' });
  }

  // A file's build without checking its records again (each keeps its slice of the text), when the whole
  // file may be taken as it is; null otherwise.
  #takeWhole(validated: StateText): Built | null {
    if (!this.#isWholeFileClean(validated)) return null;
    const texts = recordTextsOf(validated.text);
    const { goals, loops } = validated.state;
    if (texts === null || texts.goals.length !== goals.length || texts.loops.length !== loops.length) return null;
    return {
      goals: goals.map((parsed, at) => ({ key: null, record: { text: texts.goals[at] ?? '', parsed } })),
      loops: loops.map((parsed, at) => ({ text: texts.loops[at] ?? '', parsed })),
      top: Object.entries(validated.state).map(([key, value]) =>
        key === 'goals' || key === 'loops' ? { key, text: null } : { key, text: JSON.stringify(value, null, 2).replaceAll('\n', TOP_INDENT) },
      ),
      state: validated.state,
      text: validated.text,
    };
  }

  // Whether the file is exactly the pretty JSON of the state it was read as (as this builder writes it),
  // so each record's slice of it is that record's text, and nothing in all of it is what redaction or the
  // guard act on (so nothing in any record is): settled for the whole file in a few native passes over its
  // text, where a test per record parsed and stringified each one again. The scans depend on this
  // environment's secrets, and run even for a file the note vouches for; its layout needs no second look.
  #isWholeFileClean(validated: StateText): boolean {
    if (jsonSecretTest(this.#env)(validated.text) || stateSecretTest(this.#env)(validated.text)) return false;
    return validated.vouched === true || `${JSON.stringify(validated.state, null, 2)}\n` === validated.text;
  }

  // Joins the parts into the file's text and remembers the build.
  #keep(built: Built): StateText {
    const arrays = { goals: built.goals.map((goal) => goal.record), loops: built.loops };
    const parts = built.top.map(({ key, text }) => {
      const records = key === 'goals' ? arrays.goals : key === 'loops' ? arrays.loops : null;
      const value =
        records === null
          ? text
          : records.length === 0
            ? '[]'
            : `[${RECORD_INDENT}${records.map((record) => record.text).join(`,${RECORD_INDENT}`)}${TOP_INDENT}]`;
      return `${JSON.stringify(key)}: ${value ?? 'null'}`;
    });
    built.text = `{${TOP_INDENT}${parts.join(`,${TOP_INDENT}`)}\n}\n`;
    this.#last = built;
    return { text: built.text, state: built.state };
  }

  // A secret that appeared in (or left) the environment changes what redaction and the guard do: nothing
  // checked before counts. True when that happened.
  #noteSecrets(): boolean {
    const secrets = secretsInForce(this.#env);
    if (secrets === this.#secretsSeen) return false;
    this.#checked.clear();
    this.#last = null;
    this.#secretsSeen = secrets;
    return true;
  }

  // Finds a record of `validated` by its key and takes it as checked when its text holds nothing redaction
  // or the guard would act on (redaction then leaves it as it is, and the schema passed it as it is). Its
  // text is the file's own when that reads back as exactly this record, else it is pretty-printed.
  #adopter(validated: StateText): (key: string) => CheckedRecord | undefined {
    type Known = { record: unknown; text: string | undefined };
    let byKey: Map<string, Known> | null = null;
    const mayHoldSecret = jsonSecretTest(this.#env);
    const guardMayRefuse = stateSecretTest(this.#env);
    // The common case, settled once for the whole file instead of record by record (#isWholeFileClean).
    let wholeFileClean: boolean | null = null;
    const isWholeFileClean = (): boolean => (wholeFileClean ??= this.#isWholeFileClean(validated));
    const index = (): Map<string, Known> => {
      const texts = recordTextsOf(validated.text);
      const entries = (field: 'goals' | 'loops', records: readonly unknown[]): Array<[string, Known]> =>
        records.map((record, at) => [`${field}:${JSON.stringify(record)}`, { record, text: texts?.[field].length === records.length ? texts[field][at] : undefined }]);
      return new Map([...entries('goals', validated.state.goals), ...entries('loops', validated.state.loops)]);
    };
    return (key) => {
      byKey ??= index();
      const found = byKey.get(key);
      if (found === undefined) return undefined;
      if (found.text !== undefined && isWholeFileClean()) return { text: found.text, parsed: found.record };
      const compact = key.slice(key.indexOf(':') + 1);
      if (mayHoldSecret(compact) || guardMayRefuse(compact)) return undefined;
      const text = found.text !== undefined && sameJson(found.text, compact) ? found.text : JSON.stringify(found.record, null, 2).replaceAll('\n', RECORD_INDENT);
      return { text, parsed: found.record };
    };
  }

  // Redacts, validates (as it will read back) and scans one record; `where` names it in errors.
  #check(record: unknown, where: readonly (string | number)[], field: 'goals' | 'loops'): CheckedRecord {
    this.lastChecked += 1;
    const redacted = redactJson(record, this.#env);
    const compact = JSON.stringify(redacted);
    const schema = field === 'goals' ? goalRecordSchema : loopRecordSchema;
    const readBack: unknown = compact === undefined ? undefined : JSON.parse(compact);
    const parsed = schema.safeParse(readBack);
    if (!parsed.success) throw this.#invalid(describeSchemaProblem(parsed.error, where));
    this.#guard(redacted, where);
    // What the record reads back as: its JSON in its text's key order (the schemas only check; state-schema.ts).
    return { text: JSON.stringify(redacted, null, 2).replaceAll('\n', RECORD_INDENT), parsed: readBack };
  }

  #guard(value: unknown, where: readonly (string | number)[]): void {
    const secret = findSecretInState(value, JSON.stringify(value), this.#env, where.join('.'));
    if (secret === null) return;
    throw new GoaldError(
      'internal',
      `refusing to write ${this.#path}: ${secret}`,
      'this is a goald bug (secrets must never reach state files); the file was left unchanged',
    );
  }

  #invalid(problem: string): GoaldError {
    return new GoaldError('internal', `refusing to write invalid goald state to ${this.#path} (${problem})`, 'this is a goald bug; the file was left unchanged');
  }
}

// The names and values that redaction and the guard act on, as one string to compare (never written).
function secretsInForce(env: NodeJS.ProcessEnv): string {
  let found = '';
  for (const [name, value] of envEntriesNamed(env, (candidate) => isSecretName(candidate) || candidate.endsWith('_API_KEY'))) {
    found += `${name}=${value}\0`;
  }
  return found;
}

// Whether a JSON text reads back as the value whose compact JSON is `compact` (same keys, order and values).
function sameJson(text: string, compact: string): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === compact;
  } catch {
    return false;
  }
}

/**
 * The text of each element of the `goals` and `loops` arrays at the top of a state file's JSON text; null
 * when the text does not scan as one JSON value. Only a source of text to reuse: whoever takes an element
 * checks that it reads back as the record.
 */
export function recordTextsOf(text: string): { goals: string[]; loops: string[] } | null {
  return recordTextsInLayout(text) ?? scanRecordTexts(text);
}

/**
 * recordTextsOf for a file in the layout this builder writes, found by its line breaks alone: a JSON string
 * holds no raw line break, so a line break and the indent of a depth can only be the file's own structure
 * (a record starts at RECORD_INDENT + `{`, an array at the top closes at TOP_INDENT + `]`). A few indexOf
 * calls instead of a walk over every token (~5 ms for 50 goals in a cold process, where the walk is not yet
 * compiled). Null when the text is not in that layout (written by hand, or by another tool).
 */
function recordTextsInLayout(text: string): { goals: string[]; loops: string[] } | null {
  const found = { goals: [] as string[], loops: [] as string[] };
  for (const field of ['goals', 'loops'] as const) {
    const opening = `${TOP_INDENT}${JSON.stringify(field)}: [`;
    const at = text.indexOf(opening);
    if (at === -1 || text.indexOf(opening, at + 1) !== -1) return null;
    const bodyStart = at + opening.length;
    if (text.startsWith(']', bodyStart)) continue; // an empty array: `[]`
    const bodyEnd = text.indexOf(`${TOP_INDENT}]`, bodyStart);
    if (bodyEnd === -1) return null;
    const recordStart = `${RECORD_INDENT}{`;
    const recordEnd = `${RECORD_INDENT}}`;
    let start = text.indexOf(recordStart, bodyStart);
    if (start !== bodyStart) return null;
    while (start !== -1 && start < bodyEnd) {
      const next = text.indexOf(`,${recordStart}`, start + recordStart.length);
      const end = next === -1 || next > bodyEnd ? bodyEnd : next;
      if (!text.startsWith(recordEnd, end - recordEnd.length)) return null;
      found[field].push(text.slice(start + RECORD_INDENT.length, end));
      start = end === bodyEnd ? -1 : end + 1;
    }
  }
  return found;
}

// recordTextsOf by scanning the text's tokens (strings skipped whole): any JSON layout.
function scanRecordTexts(text: string): { goals: string[]; loops: string[] } | null {
  const found = { goals: [] as string[], loops: [] as string[] };
  const structural = /["{}[\]]/g;
  let depth = 0;
  let lastString = ''; // at depth 1: the key of the value that follows
  let array: 'goals' | 'loops' | null = null;
  let start = -1;
  for (let match = structural.exec(text); match !== null; match = structural.exec(text)) {
    const at = match.index;
    const char = text[at];
    if (char === '"') {
      const end = endOfString(text, at);
      if (end === -1) return null;
      if (depth === 1) lastString = text.slice(at + 1, end);
      structural.lastIndex = end + 1;
    } else if (char === '{' || char === '[') {
      if (depth === 1) array = char === '[' && (lastString === 'goals' || lastString === 'loops') ? lastString : null;
      if (depth === 2 && array !== null && char === '{') start = at;
      depth += 1;
    } else {
      depth -= 1;
      if (depth < 0) return null;
      if (depth === 2 && array !== null && char === '}') found[array].push(text.slice(start, at + 1));
    }
  }
  return depth === 0 ? found : null;
}

// The index of the quote that ends the string opening at `at`, or -1 when it never ends.
function endOfString(text: string, at: number): number {
  for (let end = text.indexOf('"', at + 1); end !== -1; end = text.indexOf('"', end + 1)) {
    let backslashes = 0;
    while (text[end - 1 - backslashes] === '\\') backslashes += 1;
    if (backslashes % 2 === 0) return end;
  }
  return -1;
}
