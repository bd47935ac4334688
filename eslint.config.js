// Lint rules that enforce STYLE.md: no `any`, no non-null `!`, no `@ts-ignore`, no `console` outside
// the CLI, process entry and tests, no `as` on object literals. `as` on external data is not caught
// by a rule: external input is parsed with zod instead, and review holds that line.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const CRM_THROUGH_ITS_MODULE = {
  group: [
    '**/connectors/hubspot/*',
    '!**/connectors/hubspot/index.ts',
    '**/connectors/salesforce/*',
    '!**/connectors/salesforce/index.ts',
    // The kit's own relative spelling of the same folders.
    '../hubspot/*',
    '!../hubspot/index.ts',
    '../salesforce/*',
    '!../salesforce/index.ts',
  ],
  message: "A CRM is reached through its module: import its folder's index.ts only.",
};
const CONNECTORS_NOT_SERVER = { group: ['**/server/**'], message: 'connectors/ import connectors/, bridge/, core/ and npm packages only (DESIGN.md, Layout).' };

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', 'data/'] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/ban-ts-comment': ['error', { 'ts-ignore': true, 'ts-nocheck': true, 'ts-expect-error': 'allow-with-description' }],
      '@typescript-eslint/consistent-type-assertions': ['error', { assertionStyle: 'as', objectLiteralTypeAssertions: 'never' }],
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // The Salesforce record component (a Lightning Web Component) and its jest tests: decorators (@api),
    // which typescript-eslint's parser reads, in the browser, under jest (npm run test:lwc).
    files: ['manifests/salesforce/force-app/**/lwc/**/*.js'],
    languageOptions: {
      parser: tseslint.parser,
      sourceType: 'module',
      globals: { document: 'readonly', jest: 'readonly', describe: 'readonly', it: 'readonly', expect: 'readonly', afterEach: 'readonly' },
    },
  },
  {
    // The LWC jest configuration is CommonJS, as sfdx-lwc-jest's own is.
    files: ['manifests/salesforce/jest.config.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['server/cli/**/*.ts', 'server/main.ts', 'test/**/*.ts', 'bin/**/*.js', 'scripts/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // The module seam (bridge/crm-module.ts): the server reaches a CRM only through its index.ts, and
    // mounts each module's routes and commands as they come.
    files: ['server/**/*.ts', 'server/**/*.tsx'],
    rules: { 'no-restricted-imports': ['error', { patterns: [CRM_THROUGH_ITS_MODULE] }] },
  },
  {
    // A connector never reaches into the server.
    files: ['connectors/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [CONNECTORS_NOT_SERVER] }] },
  },
  {
    // The kit, shared by the CRMs, reaches a CRM through its module too.
    files: ['connectors/kit/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [CRM_THROUGH_ITS_MODULE, CONNECTORS_NOT_SERVER] }] },
  },
  {
    // Imports flow server → connectors → bridge → core: the bridge is the CRM-neutral application and
    // names no CRM, no connector kit and no HTTP layer.
    files: ['bridge/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/connectors/**', '**/server/**'], message: 'bridge/ imports bridge/, core/ and npm packages only (DESIGN.md, Layout).' }] },
      ],
    },
  },
  {
    // Tests load SQLite through core/storage/better-sqlite3.ts, which picks the binding each Node.js line
    // runs (12 on Node 20, 13 on 22 and 24): the package itself fails to load on 22 and 24.
    files: ['test/**/*.ts', 'test/**/*.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'better-sqlite3',
              allowTypeImports: true,
              message: 'import Database from core/storage/better-sqlite3.ts (the binding of this Node.js line).',
            },
          ],
        },
      ],
    },
  },
  {
    // core knows no CRM, no bridge and no HTTP layer.
    files: ['core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/bridge/**', '**/connectors/**', '**/server/**'], message: 'core/ imports npm packages and core/ only (DESIGN.md, Layout).' },
          ],
        },
      ],
    },
  },
);
