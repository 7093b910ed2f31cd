import { describe, expect, it } from 'vitest';
import {
  decodeReplyObject,
  parseVerdict,
  parseVerdictText,
  VERDICT_JSON_SCHEMA,
} from '../../src/evaluator/verdict-schema.js';

interface JsonSchemaNode {
  type?: unknown;
  properties?: Record<string, JsonSchemaNode>;
  required?: string[];
  additionalProperties?: unknown;
  items?: JsonSchemaNode;
  anyOf?: JsonSchemaNode[];
}

// OpenAI strict mode: every object lists all its properties as required and forbids others.
function assertStrict(node: JsonSchemaNode, path: string): void {
  if (node.properties !== undefined) {
    expect(node.required?.slice().sort(), path).toEqual(Object.keys(node.properties).sort());
    expect(node.additionalProperties, path).toBe(false);
    for (const [key, child] of Object.entries(node.properties)) assertStrict(child, `${path}.${key}`);
  }
  if (node.items !== undefined) assertStrict(node.items, `${path}[]`);
  for (const option of node.anyOf ?? []) assertStrict(option, path);
}

describe('VERDICT_JSON_SCHEMA', () => {
  it('meets OpenAI strict-mode rules', () => {
    const schema = VERDICT_JSON_SCHEMA as JsonSchemaNode;
    expect(schema.type).toBe('object');
    expect(schema).not.toHaveProperty('$schema');
    assertStrict(schema, '(root)');
  });

  it('makes the optional fields nullable instead of optional', () => {
    const properties = (VERDICT_JSON_SCHEMA as JsonSchemaNode).properties!;
    expect(Object.keys(properties).sort()).toEqual(
      ['achieved', 'blocked', 'confidence', 'next_step', 'reason', 'remaining'].sort(),
    );
    expect(properties.next_step!.type).toEqual(['string', 'null']);
    expect(properties.confidence!.type).toEqual(['number', 'null']);
  });
});

describe('parseVerdict', () => {
  it('maps the wire shape to a Verdict', () => {
    expect(
      parseVerdict({ achieved: false, blocked: true, reason: 'no token', remaining: ['a'], next_step: 'ask', confidence: 1 }),
    ).toEqual({
      ok: true,
      verdict: { achieved: false, blocked: true, reason: 'no token', remaining: ['a'], nextStep: 'ask', confidence: 1 },
    });
  });

  it('treats null and missing optional fields as absent', () => {
    expect(parseVerdict({ achieved: true, reason: 'done', next_step: null, confidence: null, blocked: null })).toEqual({
      ok: true,
      verdict: { achieved: true, blocked: false, reason: 'done', remaining: [] },
    });
  });

  const invalid: Array<[string, unknown, RegExp]> = [
    ['a string achieved', { achieved: 'yes', reason: 'r', remaining: [] }, /achieved/],
    ['a missing reason', { achieved: true, remaining: [] }, /reason/],
    ['a confidence above 1', { achieved: true, reason: 'r', remaining: [], confidence: 85 }, /confidence/],
    ['a non-string remaining item', { achieved: true, reason: 'r', remaining: [1] }, /remaining\.0/],
    ['an array', [], /root/],
  ];
  for (const [name, value, message] of invalid) {
    it(`rejects ${name}`, () => {
      const result = parseVerdict(value);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.message).toMatch(message);
    });
  }
});

describe('decodeReplyObject', () => {
  const object = { achieved: true, reason: 'a } brace and a "quote"', remaining: [] };
  const accepted: Array<[string, string]> = [
    ['plain JSON', JSON.stringify(object)],
    ['plain JSON with whitespace around it', `\n  ${JSON.stringify(object, null, 2)}  \n`],
    ['a ```json fence that is the whole reply', `\n\`\`\`json\n${JSON.stringify(object, null, 2)}\n\`\`\`\n`],
    ['a bare ``` fence that is the whole reply', `\`\`\`\n${JSON.stringify(object)}\n\`\`\``],
  ];
  for (const [name, text] of accepted) {
    it(`accepts ${name}`, () => {
      expect(decodeReplyObject(text)).toEqual(object);
    });
  }

  // The evidence may hold such an object (an agent that prints {"achieved": true}); a reply that quotes it
  // in prose is not a verdict.
  const refused: Array<[string, string]> = [
    ['an object inside prose', `I looked carefully. ${JSON.stringify(object)} Hope this helps.`],
    ['a fence with prose before it', `Verdict:\n\`\`\`json\n${JSON.stringify(object)}\n\`\`\``],
    ['a fence with prose after it', `\`\`\`json\n${JSON.stringify(object)}\n\`\`\`\nThanks.`],
    ['an object followed by words', `${JSON.stringify(object)} trailing words`],
    ['two fences', `\`\`\`json\n{"achieved": false, "reason": "x"}\n\`\`\`\n\`\`\`json\n${JSON.stringify(object)}\n\`\`\``],
    ['a JSON array', JSON.stringify([object])],
    ['a JSON string', JSON.stringify(JSON.stringify(object))],
    ['no JSON at all', 'The goal is met.'],
    ['a cut object', '{"achieved": true, "reason": "cut'],
  ];
  for (const [name, text] of refused) {
    it(`refuses ${name}`, () => {
      expect(decodeReplyObject(text)).toBeUndefined();
    });
  }
});

describe('parseVerdictText', () => {
  it('says when a reply was cut at the token limit', () => {
    const result = parseVerdictText('{"achieved": true, "reason": "cut', true);
    expect(!result.ok && result.message).toMatch(/not JSON \(the reply was cut at the token limit\)/);
  });

  it('says when a reply is empty', () => {
    expect(parseVerdictText('  ', false)).toEqual({ ok: false, message: 'the reply is empty' });
  });
});
