// Typed lint rules: floating promises and unsafe `any` matter in a server.
// The layer rule (import-x/no-restricted-paths, generated from LAYERS) and import-x/no-cycle keep
// the arrows of docs/ARCHITECTURE.md one way: a folder imports only the folders listed for it.
import js from '@eslint/js';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import tseslint from 'typescript-eslint';

/**
 * What each folder of src/ may import besides itself (type-only imports count too). Read it
 * top-down: `cli → server | mcp → client → config → approvals | push → tasks | tools → agents | trust | audit →
 * net | state | identity | telemetry → protocol | content → errors`. `src/index.ts` (the public API) may
 * import anything.
 */
const BASE = ['errors'];
// telemetry: the OpenTelemetry API helpers every layer may start spans with (no SDK import).
const LEAVES = [...BASE, 'protocol', 'content', 'identity', 'state', 'net', 'telemetry'];
const SERVICES = [...LEAVES, 'agents', 'trust', 'audit'];
const LAYERS = {
  errors: [],
  telemetry: BASE,
  protocol: BASE,
  content: BASE,
  net: BASE,
  identity: BASE,
  state: BASE,
  agents: [...LEAVES],
  trust: [...LEAVES],
  audit: [...LEAVES],
  tasks: SERVICES,
  tools: SERVICES,
  push: [...SERVICES, 'tasks'],
  approvals: [...SERVICES, 'tasks', 'tools'],
  config: [...SERVICES, 'tasks', 'tools', 'push', 'approvals'],
  client: [...SERVICES, 'tasks', 'tools', 'push', 'approvals', 'config'],
  server: [...SERVICES, 'tasks', 'tools', 'push', 'approvals', 'config', 'client'],
  mcp: [...SERVICES, 'tasks', 'tools', 'push', 'approvals', 'config', 'client', 'server'],
  cli: [...SERVICES, 'tasks', 'tools', 'push', 'approvals', 'config', 'client', 'server', 'mcp'],
};
const FOLDERS = Object.keys(LAYERS);
const layerZones = FOLDERS.map((folder) => ({
  target: `./src/${folder}`,
  from: FOLDERS.filter((other) => other !== folder && !LAYERS[folder].includes(other)).map((other) => `./src/${other}`),
  message: `src/${folder} may import only ${LAYERS[folder].length === 0 ? 'nothing outside itself' : LAYERS[folder].join(', ')} (see docs/ARCHITECTURE.md, "Arrows")`,
})).filter((zone) => zone.from.length > 0);

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'coverage/',
      'scripts/*.mjs',
      'test/helpers/*.mjs',
      'bench/peers/*.cjs',
      'eslint.config.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      // no-cycle parses the files an import reaches: it needs the TypeScript parser for them.
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    // SQLite (3.47 and later) reads a bare `LIMIT @name` or `LIMIT ?` into the plan, and so
    // prepares the statement again every time the parameter is bound (8 µs more for a ListTasks
    // page, about 100 µs for the share eviction); `LIMIT +@name` keeps the value a run-time one.
    files: ['src/tasks/stores/sqlite.ts', 'src/tasks/stores/sqlite/**/*.ts', 'bench/peers/floor-sqlite.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['TemplateElement[value.raw=/LIMIT\\s+[@?:$]/i]', 'Literal[value=/LIMIT\\s+[@?:$]/i]'].map((selector) => ({
          selector,
          message: 'SQLite prepares a statement again each time a bare LIMIT parameter is bound: write LIMIT +@name',
        })),
      ],
    },
  },
  {
    // TypeBox (683 modules) checks the config and the registry, and when the gateway serves those
    // checks run in worker threads (src/config/off-thread.ts): loaded in the serving thread it
    // would hold a quarter of its heap for good (docs/PERFORMANCE.md). Only schema modules import it;
    // test/serving-isolate.test.ts checks that none reaches the serving thread.
    files: ['src/**/*.ts'],
    ignores: [
      'src/**/schema.ts',
      'src/**/*-schema.ts',
      'src/config/schema-check.ts',
      'src/config/check.ts',
      'src/**/*.test.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['typebox', 'typebox/*'],
              message:
                'TypeBox belongs in a schema module (schema.ts, *-schema.ts): see docs/ARCHITECTURE.md, "Config checks"',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
