// Lint rules: typescript-eslint's recommended set over src, test and bench, zero warnings in CI, and
// the import arrows of ../shared/DESIGN.md as `import-x/no-restricted-paths` zones plus
// `import-x/no-cycle`, so a crossing import or a cycle fails `npm run lint`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/** Layers from the bottom up: a file may import its own layer's folder and the layers below. */
const FOUNDATION = ['config', 'ir', 'contract', 'session', 'proto'];
/**
 * Built on the foundation, used by the services: certificates, the internal gRPC transport, and
 * the key ring (every key and secret one config gives the services).
 */
const PLATFORM = ['pki', 'grpc', 'keys'];
const SERVICES = ['translate', 'xds', 'authorize', 'authenticate', 'databroker', 'envoy'];
/** Above the services: observability watches them and the reload loop; cmd wires everything. */
const TOP = ['runtime', 'observability', 'cmd', 'cli'];
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
  ...upward(['shared'], [...FOUNDATION, ...PLATFORM, ...SERVICES, ...TOP]),
  ...upward(FOUNDATION, [...PLATFORM, ...SERVICES, ...TOP]),
  ...peers(FOUNDATION, FOUNDATION),
  ...upward(PLATFORM, [...SERVICES, ...TOP]),
  // The internal gRPC transport serves and dials with the derived TLS.
  // The key ring holds the derived TLS and the fallback certificate.
  ...peers(PLATFORM, PLATFORM, {
    'grpc->pki': ['./derived-tls.ts'],
    'keys->pki': ['./derived-tls.ts', './fallback-tls.ts'],
  }),
  ...upward(SERVICES, TOP),
  ...peers(SERVICES, SERVICES),
  ...upward(['runtime'], ['observability', 'cmd', 'cli']),
  ...upward(['observability'], ['cmd', 'cli']),
  // After parse, only translate reads Config: every other folder sees the IR and the key ring.
  // `portcullis config migrate` (cmd) rewrites config files with parse's format and migration
  // helpers, which are not Config.
  ...[...PLATFORM, ...SERVICES, ...TOP]
    .filter((dir) => dir !== 'translate')
    .map((dir) => ({
      target: at(dir),
      from: at('config'),
      ...(dir === 'cmd' ? { except: ['./formats.ts', './migrate.ts'] } : {}),
      message: `${dir} must not import config: after parse only translate reads Config; use the IR and the key ring (DESIGN.md)`,
    })),
  // The Kubernetes config source turns API objects into the inputs a file gives: it reads the
  // option table and shared helpers only, and only the composition root starts it.
  ...[...FOUNDATION, ...PLATFORM, ...SERVICES, ...TOP]
    .filter((dir) => dir !== 'config')
    .map((dir) => ({
      target: at('kubernetes'),
      from: at(dir),
      message: `kubernetes must not import ${dir}: it reads only config and shared (DESIGN.md)`,
    })),
  ...['shared', ...FOUNDATION, ...PLATFORM, ...SERVICES, ...TOP]
    .filter((dir) => dir !== 'cmd')
    .map((dir) => ({
      target: at(dir),
      from: at('kubernetes'),
      message: `${dir} must not import kubernetes: only the composition root (cmd) starts a config source`,
    })),
  // Within xds: server and publish -> snapshot; compile stands alone (all encode through src/proto).
  { target: at('xds/snapshot'), from: at('xds/compile'), message: 'the snapshot must not import compile' },
  { target: at('xds/snapshot'), from: at('xds/server'), message: 'the snapshot must not import the server' },
  { target: at('xds/server'), from: at('xds/compile'), message: 'the ADS server must not import compile' },
  { target: at('xds/snapshot'), from: at('xds/publish'), message: 'the snapshot must not import publish' },
  { target: at('xds/server'), from: at('xds/publish'), message: 'the ADS server must not import publish' },
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
