// Compile's output is typed with the generated Envoy messages (src/proto/messages.ts), so a
// misspelt field is a typecheck error rather than a setting protobufjs silently drops. Shown on
// compile's own source: each case misspells one thing in a real compile file, typechecks it with
// the project's compiler options, and expects an error at that spot naming what was misspelt.
// misspelt-fields.ts holds more cases as `@ts-expect-error` lines that `npm run typecheck` checks.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** The project's compiler options (tsconfig.json). */
function projectOptions(): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  return ts.parseJsonConfigFileContent(config.config, ts.sys, root).options;
}

const options = projectOptions();
let previous: ts.Program | undefined;

/** The typecheck errors in `file` (relative to the repository) when its text is `text`. */
function errorsIn(file: string, text: string): string[] {
  const path = join(root, file);
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError, create) =>
    name === path ? ts.createSourceFile(name, text, language, true) : read(name, language, onError, create);
  const program = ts.createProgram([path], options, host, previous);
  previous = program;
  const source = program.getSourceFile(path);
  assert.ok(source, file);
  return ts
    .getPreEmitDiagnostics(program, source)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

/** `file`'s text with `from` (which must occur exactly once) replaced by `to`. */
function misspell(file: string, from: string, to: string): string {
  const text = readFileSync(join(root, file), 'utf8');
  assert.equal(text.split(from).length, 2, `${from} occurs once in ${file}`);
  return text.replace(from, to);
}

const CASES = [
  {
    what: 'a Cluster field',
    file: 'src/xds/compile/cluster.ts',
    from: 'connect_timeout: durationMs(',
    to: 'connect_timout: durationMs(',
    named: "'connect_timout' does not exist in type 'envoy_config_cluster_v3_Cluster'",
  },
  {
    what: 'a field in a typed config (ext_authz)',
    file: 'src/xds/compile/ext-authz.ts',
    from: 'failure_mode_allow: false',
    to: 'failure_mode_alow: false',
    named: "'failure_mode_alow' does not exist in type 'envoy_extensions_filters_http_ext_authz_v3_ExtAuthz'",
  },
  {
    what: 'an enum value name',
    file: 'src/xds/compile/listener.ts',
    from: "path_with_escaped_slashes_action: 'REJECT_REQUEST'",
    to: "path_with_escaped_slashes_action: 'REJECT_REQUESTS'",
    named: '"REJECT_REQUESTS"',
  },
  {
    what: 'a field assigned after the literal',
    file: 'src/xds/compile/route-configuration.ts',
    from: 'action.append_x_forwarded_host = true;\n  } else',
    to: 'action.append_x_forwarded_hst = true;\n  } else',
    named: "'append_x_forwarded_hst' does not exist on type 'envoy_config_route_v3_RouteAction'",
  },
  {
    what: 'the message a typed config names',
    file: 'src/xds/compile/host-case.ts',
    from: "LUA_PER_ROUTE_TYPE = 'envoy.extensions.filters.http.lua.v3.LuaPerRoute'",
    to: "LUA_PER_ROUTE_TYPE = 'envoy.extensions.filters.http.lua.v3.Lua'",
    named: "'disabled' does not exist in type 'envoy_extensions_filters_http_lua_v3_Lua'",
  },
  {
    what: 'the message of a typed config built beforehand',
    file: 'src/xds/compile/upstream-tls.ts',
    from: "typed('envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext'",
    to: "typed('envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext'",
    named: '"envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext"',
  },
] as const;

test('compile files typecheck as they are (the baseline of the cases below)', () => {
  for (const { file } of CASES) assert.deepEqual(errorsIn(file, readFileSync(join(root, file), 'utf8')), []);
});

for (const { what, file, from, to, named } of CASES) {
  test(`misspelling ${what} in ${file} fails typecheck, naming it`, () => {
    const errors = errorsIn(file, misspell(file, from, to));
    assert.ok(
      errors.some((message) => message.includes(named)),
      `expected an error with ${named}, got:\n${errors.join('\n')}`,
    );
  });
}
