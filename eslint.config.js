// ESLint 9 flat config: typescript-eslint's type-checked rules over every TypeScript file in tsconfig.json.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/**'],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Objects here are closures from factory functions; passing `running.suspend` or a destructured
      // `join` along is how the code is written, and no such method reads `this`.
      '@typescript-eslint/unbound-method': 'off',
      // `async` without `await` is used on purpose: it turns a synchronous throw into a rejection.
      '@typescript-eslint/require-await': 'off',
      // Rejecting with an AbortSignal's `reason` (typed any) is the platform's convention for aborts.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // Destructuring a key away to copy the rest is how this code drops a field.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  {
    // zod comes configured from src/zod.ts or src/zod-mini.ts (no generated parsers); importing it
    // directly would skip that.
    files: ['src/**/*.ts', 'state/**/*.ts'],
    ignores: ['src/zod.ts', 'src/zod-mini.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'zod', message: 'import { z } from src/zod.ts, which configures zod first', allowTypeImports: true },
            { name: 'zod/mini', message: 'import { z } from src/zod-mini.ts, which configures zod first', allowTypeImports: true },
          ],
        },
      ],
    },
  },
  {
    // These strip terminal escapes and control characters from agent output on purpose.
    files: ['src/agents/aider-output.ts', 'src/evaluator/evidence.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    // vitest's asymmetric matchers (expect.any, stringMatching, closeTo) are typed `any`.
    files: ['test/**/*.ts', 'test-agents/**/*.ts'],
    rules: { '@typescript-eslint/no-unsafe-assignment': 'off' },
  },
  {
    // Plain JavaScript (this file, fixture agents, the demo agent) is outside the TypeScript project.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', setInterval: 'readonly', clearTimeout: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', URL: 'readonly' },
    },
  },
);
