// Where a JSON text first goes wrong. V8's JSON.parse messages give a position only for some errors
// ("Unexpected token '}', "{"a": }" is not valid JSON" has none), so config errors find it themselves
// with this small scanner of the JSON grammar (RFC 8259) and report it as a line and column.

export interface JsonErrorPosition {
  /** 0-based offset of the offending character (the text's length for an unexpected end). */
  offset: number;
  /** 1-based line and column (column counted in UTF-16 code units, as editors mostly do). */
  line: number;
  column: number;
  /** One-line description: `unexpected "}"`, `unexpected end of file`, ... */
  message: string;
}

class JsonSyntaxProblem extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

/** Returns the first syntax error of `text` as JSON, or null when it is valid JSON. */
export function findJsonError(text: string): JsonErrorPosition | null {
  try {
    new JsonScanner(text).scanDocument();
    return null;
  } catch (error) {
    if (!(error instanceof JsonSyntaxProblem)) throw error;
    return { ...lineAndColumn(text, error.offset), offset: error.offset, message: error.message };
  }
}

/** The 1-based line and column of an offset. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 0x0a) {
      line += 1;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

class JsonScanner {
  #pos = 0;

  constructor(readonly text: string) {}

  scanDocument(): void {
    this.#skipSpace();
    this.#scanValue();
    this.#skipSpace();
    if (this.#pos < this.text.length) this.#fail('unexpected %s after the end of the JSON value');
  }

  #fail(template: string): never {
    const char = this.text[this.#pos];
    const what = char === undefined ? 'end of file' : JSON.stringify(char);
    throw new JsonSyntaxProblem(this.#pos, template.replace('%s', what));
  }

  #skipSpace(): void {
    while (this.#pos < this.text.length && ' \t\n\r'.includes(this.text[this.#pos] ?? '')) this.#pos += 1;
  }

  #expect(char: string, template: string): void {
    if (this.text[this.#pos] !== char) this.#fail(template);
    this.#pos += 1;
  }

  #scanValue(): void {
    const char = this.text[this.#pos];
    if (char === '{') this.#scanObject();
    else if (char === '[') this.#scanArray();
    else if (char === '"') this.#scanString();
    else if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) this.#scanNumber();
    else if (char === 't') this.#scanWord('true');
    else if (char === 'f') this.#scanWord('false');
    else if (char === 'n') this.#scanWord('null');
    else this.#fail('unexpected %s, expected a value');
  }

  #scanObject(): void {
    this.#pos += 1;
    this.#skipSpace();
    if (this.text[this.#pos] === '}') {
      this.#pos += 1;
      return;
    }
    for (;;) {
      if (this.text[this.#pos] !== '"') this.#fail('unexpected %s, expected a "quoted" property name');
      this.#scanString();
      this.#skipSpace();
      this.#expect(':', 'unexpected %s, expected ":"');
      this.#skipSpace();
      this.#scanValue();
      this.#skipSpace();
      if (this.text[this.#pos] === '}') {
        this.#pos += 1;
        return;
      }
      this.#expect(',', 'unexpected %s, expected "," or "}"');
      this.#skipSpace();
      // JSON has no trailing commas; say so, since it is the commonest slip in hand-written config.
      if (this.text[this.#pos] === '}') this.#fail('unexpected %s after ",": JSON allows no trailing comma');
    }
  }

  #scanArray(): void {
    this.#pos += 1;
    this.#skipSpace();
    if (this.text[this.#pos] === ']') {
      this.#pos += 1;
      return;
    }
    for (;;) {
      this.#scanValue();
      this.#skipSpace();
      if (this.text[this.#pos] === ']') {
        this.#pos += 1;
        return;
      }
      this.#expect(',', 'unexpected %s, expected "," or "]"');
      this.#skipSpace();
      if (this.text[this.#pos] === ']') this.#fail('unexpected %s after ",": JSON allows no trailing comma');
    }
  }

  #scanString(): void {
    this.#pos += 1;
    for (;;) {
      const code = this.text.charCodeAt(this.#pos);
      if (Number.isNaN(code)) this.#fail('unexpected %s inside a string');
      if (code === 0x22) {
        this.#pos += 1;
        return;
      }
      if (code < 0x20) this.#fail('unexpected control character %s inside a string (escape it)');
      if (code === 0x5c) {
        this.#pos += 1;
        const escape = this.text[this.#pos];
        if (escape === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.#pos + 1, this.#pos + 5))) {
            this.#fail('bad \\u escape: expected 4 hex digits after %s');
          }
          this.#pos += 5;
          continue;
        }
        if (escape === undefined || !'"\\/bfnrt'.includes(escape)) this.#fail('bad escape \\%s inside a string');
      }
      this.#pos += 1;
    }
  }

  #scanDigits(): void {
    const start = this.#pos;
    while (/[0-9]/.test(this.text[this.#pos] ?? '')) this.#pos += 1;
    if (this.#pos === start) this.#fail('unexpected %s, expected a digit');
  }

  #scanNumber(): void {
    if (this.text[this.#pos] === '-') this.#pos += 1;
    if (this.text[this.#pos] === '0') this.#pos += 1;
    else this.#scanDigits();
    if (this.text[this.#pos] === '.') {
      this.#pos += 1;
      this.#scanDigits();
    }
    if (this.text[this.#pos] === 'e' || this.text[this.#pos] === 'E') {
      this.#pos += 1;
      if (this.text[this.#pos] === '+' || this.text[this.#pos] === '-') this.#pos += 1;
      this.#scanDigits();
    }
  }

  #scanWord(word: string): void {
    for (const expected of word) {
      if (this.text[this.#pos] !== expected) this.#fail(`unexpected %s, expected ${word}`);
      this.#pos += 1;
    }
  }
}
