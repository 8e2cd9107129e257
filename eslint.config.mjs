// ESLint: typescript-eslint's recommended type-checked rules over every package's TypeScript sources.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'packages/server/thrift/gen-nodejs/**',
      'packages/server/src/grpc/gen-proto/**',
      'torture/**',
      'scripts/**',
      'benchmarks/**',
      'eslint.config.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    files: ['packages/*/src/**/*.ts', 'packages/*/src/**/*.cts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // node:test's describe/it/test return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // Issue 25: no production function over 100 lines (tests, test kits and generated code aside).
    files: ['packages/*/src/**/*.ts', 'packages/*/src/**/*.cts'],
    ignores: [
      '**/*.test.ts',
      '**/testing/**',
      '**/conformance/**',
      '**/*test-kit*',
      '**/*test-support*',
      '**/gen-*/**',
      '**/http/inject.ts',
      '**/http/in-process.ts',
      '**/sql/generate-cases.ts',
      // SQL/DDL text builders (mysqlGenerator, postgresGenerator, mysqlUuidSql): one statement template each, read top to bottom.
      'packages/core/src/sql/generate-mysql.ts',
      'packages/core/src/sql/generate-postgres.ts',
      'packages/core/src/sql/uuid-ddl.ts',
    ],
    rules: { 'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true }] },
  },
  {
    // The console's page (packages/server/console/): plain browser modules, no type information.
    files: ['packages/server/console/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        [
          'document',
          'window',
          'globalThis',
          'sessionStorage',
          'fetch',
          'EventSource',
          'Event',
          'ResizeObserver',
          'getComputedStyle',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'clearInterval',
          'URLSearchParams',
          'Intl',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
);
