// The fast path's shadow RBAC config (the ECDS resource, xds/compile/fast-path-rbac.ts) and the CEL
// ASTs it carries (xds/compile/cel.ts): the shape Envoy 1.40 was shown to accept and evaluate
// (test/integration/fast-path-compiled.test.ts), sorted and deterministic, failing closed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  compileFastPathRbac,
  denyEverything,
  mintedAfter,
  PLACEHOLDER_SID,
  routeListed,
} from '../../../src/xds/compile/fast-path-rbac.js';
import { celParsed } from '../../../src/xds/compile/cel.js';
import { assertKnownFields, encodeMessage } from '../../../src/proto/codec.js';
import { TYPED_EXTENSION_CONFIG_TYPE } from '../../../src/proto/type-urls.js';
import {
  DECISION_SID_HEADER,
  FAST_PATH_FILTER,
  FAST_PATH_STAT_PREFIX,
} from '../../../src/contract/fast-path.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const RBAC_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC';

/** The payload jwt_authn writes: `metadata.filter_metadata['envoy.filters.http.jwt_authn']['s']`, ids from `first`. */
function payloadAst(first: number): Json {
  const call = (id: number, args: Json[]): Json => ({ id, call_expr: { function: '_[_]', args } });
  return call(first, [
    call(first + 1, [
      {
        id: first + 2,
        select_expr: {
          operand: { id: first + 3, ident_expr: { name: 'metadata' } },
          field: 'filter_metadata',
        },
      },
      { id: first + 4, const_expr: { string_value: 'envoy.filters.http.jwt_authn' } },
    ]),
    { id: first + 5, const_expr: { string_value: 's' } },
  ]);
}

test('"route listed" is the AST of xds.route_name in <payload>[r], numbered depth first', () => {
  assert.deepEqual(celParsed(routeListed()), {
    expr: {
      id: 1,
      call_expr: {
        function: '@in',
        args: [
          { id: 2, select_expr: { operand: { id: 3, ident_expr: { name: 'xds' } }, field: 'route_name' } },
          {
            id: 4,
            call_expr: {
              function: '_[_]',
              args: [payloadAst(5), { id: 11, const_expr: { string_value: 'r' } }],
            },
          },
        ],
      },
    },
  });
});

test('"minted after" compares the token v with a double (metadata numbers are doubles)', () => {
  assert.deepEqual(celParsed(mintedAfter(1_700_000_000_123)), {
    expr: {
      id: 1,
      call_expr: {
        function: '_>_',
        args: [
          {
            id: 2,
            call_expr: {
              function: '_[_]',
              args: [payloadAst(3), { id: 9, const_expr: { string_value: 'v' } }],
            },
          },
          { id: 10, const_expr: { double_value: 1_700_000_000_123 } },
        ],
      },
    },
  });
});

/** The rendered-free view of the resource's RBAC config. */
function rbacOf(revocations: Parameters<typeof compileFastPathRbac>[0], overflowed = false): Json {
  const resource = compileFastPathRbac(revocations, overflowed) as Json;
  assertKnownFields(TYPED_EXTENSION_CONFIG_TYPE, resource);
  assert.equal(resource.name, FAST_PATH_FILTER);
  assert.equal(resource.typed_config['@type'], RBAC_TYPE);
  assert.equal(resource.typed_config.shadow_rules_stat_prefix, FAST_PATH_STAT_PREFIX);
  assert.equal(resource.typed_config.rules, undefined, 'shadow only: it never enforces');
  assert.equal(resource.typed_config.matcher, undefined);
  return resource.typed_config as Json;
}

const action = (on: Json): [string, string] => [on.action.name, on.action.typed_config.action];

test('no revocations: the placeholder DENY, and ALLOW only with a sid header and a listed route', () => {
  const matcher = rbacOf([]).shadow_matcher;
  assert.equal(matcher.matcher_tree.input.typed_config.header_name, DECISION_SID_HEADER);
  assert.deepEqual(Object.keys(matcher.matcher_tree.exact_match_map.map), [PLACEHOLDER_SID]);
  assert.deepEqual(action(matcher.matcher_tree.exact_match_map.map[PLACEHOLDER_SID]), ['revoked', 'DENY']);
  const other = matcher.on_no_match.matcher;
  assert.deepEqual(action(other.on_no_match), ['unlisted', 'DENY']);
  const [only, ...rest] = other.matcher_list.matchers;
  assert.equal(rest.length, 0);
  assert.deepEqual(action(only.on_match), ['listed', 'ALLOW']);
  const [sidPresent, listed] = only.predicate.and_matcher.predicate;
  assert.equal(sidPresent.single_predicate.input.typed_config.header_name, DECISION_SID_HEADER);
  assert.deepEqual(sidPresent.single_predicate.value_match, { safe_regex: { google_re2: {}, regex: '.+' } });
  assert.deepEqual(listed.single_predicate.custom_match.typed_config.expr_match, {
    parsed_expr: celParsed(routeListed()),
  });
});

test('a revoked sid allows only a token minted after notBeforeMs that lists the route', () => {
  const map = rbacOf([{ sid: 'sid-b', notBeforeMs: 5 }]).shadow_matcher.matcher_tree.exact_match_map.map;
  assert.deepEqual(Object.keys(map), [PLACEHOLDER_SID, 'sid-b']);
  const nested = map['sid-b'].matcher;
  assert.deepEqual(action(nested.on_no_match), ['revoked', 'DENY']);
  const [only] = nested.matcher_list.matchers;
  assert.deepEqual(action(only.on_match), ['listed', 'ALLOW']);
  const { expr } = only.predicate.single_predicate.custom_match.typed_config.expr_match.parsed_expr;
  assert.equal(expr.call_expr.function, '_&&_');
  const [after, listed] = expr.call_expr.args;
  assert.equal(after.call_expr.function, '_>_');
  assert.deepEqual(after.call_expr.args[1].const_expr, { double_value: 5 });
  assert.equal(listed.call_expr.function, '@in');
});

test('equal sets give equal bytes: sorted by sid, a sid listed twice keeps its latest notBeforeMs', () => {
  const bytes = (revocations: Parameters<typeof compileFastPathRbac>[0]): string =>
    Buffer.from(encodeMessage(TYPED_EXTENSION_CONFIG_TYPE, compileFastPathRbac(revocations, false))).toString(
      'hex',
    );
  const sorted = [
    { sid: 'a', notBeforeMs: 1 },
    { sid: 'b', notBeforeMs: 9 },
    { sid: 'c', notBeforeMs: 3 },
  ];
  const shuffled = [sorted[2], { sid: 'b', notBeforeMs: 4 }, sorted[0], sorted[1]] as typeof sorted;
  assert.equal(bytes(shuffled), bytes(sorted));
  assert.deepEqual(Object.keys(rbacOf(shuffled).shadow_matcher.matcher_tree.exact_match_map.map), [
    PLACEHOLDER_SID,
    'a',
    'b',
    'c',
  ]);
  assert.notEqual(bytes([{ sid: 'a', notBeforeMs: 2 }]), bytes([{ sid: 'a', notBeforeMs: 1 }]));
});

test('overflowed, and the default config: nothing is ever allowed', () => {
  for (const config of [rbacOf([{ sid: 'x', notBeforeMs: 1 }], true), denyEverything('unavailable')]) {
    assert.doesNotMatch(JSON.stringify(config), /ALLOW/);
    assert.deepEqual(Object.keys(config.shadow_matcher.matcher_tree.exact_match_map.map), [PLACEHOLDER_SID]);
  }
  assert.deepEqual(action(rbacOf([], true).shadow_matcher.on_no_match), ['overflowed', 'DENY']);
});
