#!/usr/bin/env node
// DEMO ONLY: a scripted stand-in for a coding agent, used by `npm run demo` so the loop can be shown
// offline without an API key. It reads goald's prompt from stdin like a real agent would, then fixes
// one bug of the demo project per turn. Real runs use Claude Code, Codex, aider or any shell command.
import { readFileSync, writeFileSync } from 'node:fs';

const prompt = readFileSync(0, 'utf8');
const turn = Number(process.env.GOALD_TURN ?? '1');
const recitation = prompt.slice(prompt.indexOf('=== GOAL RECITATION'));
console.log(`demo agent, turn ${turn}: read a ${prompt.length}-char prompt ending with:`);
console.log(recitation.split('\n').slice(0, 2).join('\n'));

const source = readFileSync('math.mjs', 'utf8');
if (source.includes('a - b')) {
  writeFileSync('math.mjs', source.replace('a - b', 'a + b'));
  console.log('fixed add(): it subtracted instead of adding');
} else if (source.includes('a + b;\nexport const multiply = (a, b) => a + b')) {
  writeFileSync('math.mjs', source.replace('multiply = (a, b) => a + b', 'multiply = (a, b) => a * b'));
  console.log('fixed multiply(): it added instead of multiplying');
} else {
  console.log('nothing left to fix');
}
// Real agents report usage; this one reports a plausible figure so the totals mean something.
console.log(`GOALD_USAGE ${JSON.stringify({ input_tokens: Math.ceil(prompt.length / 4), output_tokens: 180 })}`);
