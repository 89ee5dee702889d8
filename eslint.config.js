// Lint rules: typescript-eslint's recommended set over src, test and bench, zero warnings in CI, and
// the import arrows of ../shared/DESIGN.md as `import-x/no-restricted-paths` zones plus
// `import-x/no-cycle`, so a crossing import or a cycle fails `npm run lint`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/** Layers from the bottom up: a file may import its own layer's folder and the layers below. */
const FOUNDATION = ['config', 'ir', 'contract', 'session', 'proto'];
const SERVICES = ['translate', 'xds', 'authorize', 'authenticate', 'databroker', 'envoy'];
const TOP = ['runtime', 'cmd', 'cli'];
const at = (dir) => `./src/${dir}`;

/** Peers of one layer must not import each other (each sees the layers below only). */
const peers = (dirs, layer, exceptions = {}) =>
  dirs.flatMap((dir) =>
    layer
      .filter((other) => other !== dir)
      .map((other) => ({
        target: at(dir),
        from: at(other),
        ...(exceptions[`${dir}->${other}`] ? { except: exceptions[`${dir}->${other}`] } : {}),
        message: `${dir} and ${other} are peers in DESIGN.md's layers; share through a lower layer`,
      })),
  );

/** Nothing imports a layer above its own. */
const upward = (dirs, above) =>
  dirs.flatMap((dir) =>
    above.map((upper) => ({
      target: at(dir),
      from: at(upper),
      message: `${dir} must not import ${upper}: imports point down (DESIGN.md)`,
    })),
  );

const IMPORT_ZONES = [
  ...upward(['shared'], [...FOUNDATION, ...SERVICES, ...TOP]),
  ...upward(FOUNDATION, [...SERVICES, ...TOP]),
  ...peers(FOUNDATION, FOUNDATION),
  ...upward(SERVICES, TOP),
  ...peers(SERVICES, SERVICES),
  ...upward(['runtime'], ['cmd', 'cli']),
  // Only translate reads Config: the ADS server, ext_authz and the rest see IR and contract types.
  ...SERVICES.filter((dir) => dir !== 'translate').map((dir) => ({
    target: at(dir),
    from: at('config'),
    message: `${dir} must not import config: it sees IR and contract types (DESIGN.md)`,
  })),
  // Within xds: server -> snapshot; compile stands alone (all three encode through src/proto).
  { target: at('xds/snapshot'), from: at('xds/compile'), message: 'the snapshot must not import compile' },
  { target: at('xds/snapshot'), from: at('xds/server'), message: 'the snapshot must not import the server' },
  { target: at('xds/server'), from: at('xds/compile'), message: 'the ADS server must not import compile' },
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'proto/**', '.tools/**', 'bench/results/**', 'dist/**', '**/.scratch/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: IMPORT_ZONES }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
