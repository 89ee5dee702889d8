// The fast path's Envoy assumptions (issue 35), proven in a real Envoy 1.40 with no Portcullis: a static
// bootstrap (test/support/fast-path-envoy.ts) with an early header mutation dropping a client's
// x-portcullis-sid, jwt_authn (cookie _portcullis_dt, payload_in_metadata `s`, claim_to_headers sid, 5 s
// skew, one provider per host audience, chosen per route through requirement_map + PerRouteConfig, each
// `requires_any[provider, allow_missing_or_failed]`), header_to_metadata (cookie _portcullis_as ->
// portcullis:as), a shadow RBAC from an ECDS file, per-route header_mutation (x-portcullis-jwt-assertion
// from %DYNAMIC_METADATA(portcullis:as)%), and a gRPC ext_authz that counts Checks, gated by
// filter_enabled_metadata.
// PROVEN: the matcher-based shadow RBAC writes `shadow_engine_result` (`allowed`/`denied`) and
// `shadow_effective_policy_id` (the Action name) under `envoy.filters.http.rbac` even when the HttpFilter
// has another name (ECDS resource `portcullis-fastpath`), before ext_authz reads it; with
// `shadow_rules_stat_prefix: fp_` both keys become `fp_shadow_engine_result` /
// `fp_shadow_effective_policy_id` (the unprefixed ones are absent), so the gate must name the prefixed
// key. claim_to_headers sets x-portcullis-sid before the RBAC's header input reads it. CEL `in` over the
// list claim works at 1 and 50 names; a string `r`, a missing `r`, and every forged, other-key (same kid),
// tampered, truncated, expired (> skew), not-yet-valid, other-audience, other-issuer, alg-none or revoked
// or sid-less token means "ask ext_authz". A 3 KiB cookie survives into metadata and a header intact. A
// path_config_source + watched_directory ECDS file, replaced by an atomic rename, applied in 2-9 ms
// (rename -> first request that asks, measured over runs on 2 cores), on an open keep-alive connection,
// with no listener_modified; a rejected update keeps the last good map.
// DIFFERENT from envoy-fast-path.md: (1) CelMatcher accepts only an AST: `cel_expr_string` parses but
// Envoy says "CEL expression not set"; the AST is built by hand (`routeListedExpr`: `@in` and `_[_]`
// calls). (2) `exact_match_map` must hold at least one pair: an empty revocation map is rejected, so a
// placeholder sid is kept in it. (3) CEL `in` over a map tests its keys, so an `r` map naming the route
// passes too. (4) With only the map + CEL, a token without `sid` takes the fast path unrevocably (no
// header: the map is skipped): the ALLOW predicate must also require the header (here an and_matcher
// [header `.+` regex, CEL]; proven both ways; an xds RegexMatcher needs `google_re2: {}`). (5) With one
// audience list for all hosts, the route-name check is the only host binding: a token with aud B that
// lists A's route passes on A (proven); per-host providers (here per-route requirement_name) refuse it,
// and route names must stay unique across hosts. (6) The assertion cookie is not bound to the decision
// token: a client's `_portcullis_as` of choice reaches the upstream on the fast path, and on the slow path
// unless ext_authz's allow overwrites or removes the header; a missing cookie adds no header at all. (7)
// jwt_max_token_size (default 4096) only limits the per-worker cache: a 6 KiB token still verifies, just
// never hits the cache; a 3.5 KiB one does. (8) The decision cookie and x-portcullis-sid reach the
// upstream: the credential strip must remove them. (9) jwt_authn itself removes a client-sent
// claim_to_headers header, whether the token is missing, malformed, sid-less or good (proven with the
// early strip off): the early strip is defence in depth, load-bearing only where jwt_authn does not run (a
// route with it disabled).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import {
  makeDecisionKey,
  signDecision,
  unsignedDecision,
  type DecisionClaims,
} from '../support/decision-tokens.js';
import {
  APP_HOST,
  ASSERTION_HEADER,
  ISSUER,
  OTHER_HOST,
  PLAIN_RESULT_HEADER,
  ROUTE_ALPHA,
  ROUTE_BETA,
  ROUTE_OTHER,
  SHADOW_POLICY_HEADER,
  SHADOW_RESULT_HEADER,
  SID_HEADER,
  shadowRbac,
  writeEcdsFile,
} from '../support/fast-path-envoy.js';
import { startFastPathEnvoy, type FastPathAnswer, type FastPathEnvoy } from '../support/fast-path-harness.js';
import { waitFor } from '../support/wait.js';

/** A sid the ECDS file revokes from the start. */
const PRE_REVOKED = 'sid-pre-revoked';
/** ~3 KiB identity assertion stand-in (cookie-safe characters, with a recognisable tail). */
const ASSERTION = `${'eyJhbGciOiJFUzI1NiJ9'.repeat(153)}.tail-${Date.now()}`;

let fp: FastPathEnvoy;

before(async () => {
  fp = await startFastPathEnvoy({ revoked: [PRE_REVOKED] });
});

after(async () => {
  await fp?.stop();
});

/** Claims of a good token for `sid` listing `routes` on the app host. */
function claims(
  sid: string,
  routes: unknown = [ROUTE_ALPHA],
  extra: Record<string, unknown> = {},
): DecisionClaims {
  return { iss: ISSUER, aud: APP_HOST, sid, r: routes, ...extra };
}

/** The request took the fast path: 200 from the upstream, no Check, the shadow RBAC said allowed. */
function assertFast(answer: FastPathAnswer, label: string): void {
  assert.equal(answer.status, 200, `${label}: status`);
  assert.equal(answer.checks, 0, `${label}: no Check`);
  assert.equal(answer.upstream?.[SHADOW_RESULT_HEADER], 'allowed', `${label}: shadow result`);
}

/** The request went to ext_authz, which denies (403): one Check and the upstream never reached. */
function assertAsked(answer: FastPathAnswer, label: string): void {
  assert.equal(answer.checks, 1, `${label}: one Check`);
  assert.equal(answer.status, 403, `${label}: the counting authz's deny decided`);
  assert.equal(answer.upstream, undefined, `${label}: upstream not reached`);
}

describe('the fast path in a real Envoy', () => {
  test('a token listing alpha skips ext_authz on alpha, with the 3 KiB assertion intact; beta asks', async () => {
    fp.authz.answer({ kind: 'allow' });
    const token = await signDecision(fp.key, claims('sid-alpha'));
    const alpha = await fp.send(APP_HOST, '/alpha', { token, assertion: ASSERTION });
    assertFast(alpha, 'alpha');
    assert.equal(alpha.upstream?.[SHADOW_POLICY_HEADER], 'listed');
    assert.equal(
      alpha.upstream?.[ASSERTION_HEADER],
      ASSERTION,
      'the assertion cookie reached the upstream whole',
    );
    assert.equal(alpha.upstream?.[SID_HEADER], 'sid-alpha', 'claim_to_headers ran before the RBAC read it');
    const beta = await fp.send(APP_HOST, '/beta', { token, assertion: ASSERTION });
    assert.equal(beta.status, 200);
    assert.equal(beta.checks, 1, 'beta is not listed: ext_authz asked');
    assert.equal(beta.upstream?.[SHADOW_RESULT_HEADER], 'denied');
    assert.equal(beta.upstream?.[SHADOW_POLICY_HEADER], 'unlisted');
    fp.authz.answer({ kind: 'deny' });
    assertAsked(await fp.send(APP_HOST, '/beta', { token }), 'beta with a deny');
    // The negative control for "no Check": the same alpha request without the token asks.
    assertAsked(await fp.send(APP_HOST, '/alpha', { assertion: ASSERTION }), 'alpha without a token');
  });

  test('every unverifiable or non-matching token falls back to ext_authz (fail closed)', async () => {
    fp.authz.answer({ kind: 'deny' });
    const other = await makeDecisionKey(fp.key.kid);
    const now = Math.floor(Date.now() / 1000);
    const good = await signDecision(fp.key, claims('sid-good'));
    const [header, , signature] = good.split('.');
    const tampered = Buffer.from(JSON.stringify({ ...claims('sid-tampered'), exp: now + 120 })).toString(
      'base64url',
    );
    const cases: [string, string | undefined][] = [
      ['no cookie', undefined],
      ['not a JWT', 'not-a-token'],
      ['malformed segments', 'abc.def.ghi'],
      ['a good signature over another payload', `${header}.${tampered}.${signature}`],
      ['truncated signature', good.slice(0, -8)],
      ['signed by another key (same kid)', await signDecision(other, claims('sid-good'))],
      [
        'expired beyond the 5 s skew',
        await signDecision(fp.key, claims('sid-good', [ROUTE_ALPHA], { exp: now - 30 })),
      ],
      ['not yet valid', await signDecision(fp.key, claims('sid-good', [ROUTE_ALPHA], { nbf: now + 60 }))],
      [
        'audience of the other host',
        await signDecision(fp.key, claims('sid-good', [ROUTE_ALPHA], { aud: OTHER_HOST })),
      ],
      [
        'another issuer',
        await signDecision(fp.key, claims('sid-good', [ROUTE_ALPHA], { iss: 'https://evil.test' })),
      ],
      ['r a string, not a list', await signDecision(fp.key, claims('sid-good', ROUTE_ALPHA))],
      [
        'r missing',
        await signDecision(fp.key, { iss: ISSUER, aud: APP_HOST, sid: 'sid-good' } as DecisionClaims),
      ],
      ['r listing only beta', await signDecision(fp.key, claims('sid-good', [ROUTE_BETA]))],
      ['r listing the other host route', await signDecision(fp.key, claims('sid-good', [ROUTE_OTHER]))],
      ['alg none', unsignedDecision(fp.key.kid, claims('sid-good'))],
      ['a revoked sid', await signDecision(fp.key, claims(PRE_REVOKED))],
    ];
    for (const [name, token] of cases) {
      assertAsked(await fp.send(APP_HOST, '/alpha', token === undefined ? {} : { token }), name);
    }
    // Positive controls: the good token, one expired within the skew, and the other host's own token.
    assertFast(await fp.send(APP_HOST, '/alpha', { token: good }), 'good token');
    const withinSkew = await signDecision(fp.key, claims('sid-good', [ROUTE_ALPHA], { exp: now - 2 }));
    assertFast(await fp.send(APP_HOST, '/alpha', { token: withinSkew }), 'expired 2 s ago, within the skew');
    // CEL `in` over a map tests its keys: only the signer chooses the shape of r, but the fact stands.
    const asMap = await signDecision(fp.key, claims('sid-good', { [ROUTE_ALPHA]: false }));
    assertFast(await fp.send(APP_HOST, '/alpha', { token: asMap }), 'r a map whose keys name alpha');
    const otherHost = await signDecision(fp.key, claims('sid-good', [ROUTE_OTHER], { aud: OTHER_HOST }));
    assertFast(await fp.send(OTHER_HOST, '/', { token: otherHost }), 'the other host with its own audience');
  });

  test('a client-sent x-portcullis-sid neither revokes, un-revokes nor opens anything', async () => {
    fp.authz.answer({ kind: 'deny' });
    const fresh = await signDecision(fp.key, claims('sid-fresh'));
    const spoofedRevoke = await fp.send(APP_HOST, '/alpha', {
      token: fresh,
      headers: { [SID_HEADER]: PRE_REVOKED },
    });
    assertFast(spoofedRevoke, 'a revoked sid in the header does not revoke a good token');
    assert.equal(
      spoofedRevoke.upstream?.[SID_HEADER],
      'sid-fresh',
      'only the token sid reached the RBAC and upstream',
    );
    const revoked = await signDecision(fp.key, claims(PRE_REVOKED));
    assertAsked(
      await fp.send(APP_HOST, '/alpha', { token: revoked, headers: { [SID_HEADER]: 'sid-fresh' } }),
      'a fresh sid in the header does not un-revoke a revoked token',
    );
    const noSid = await signDecision(fp.key, {
      iss: ISSUER,
      aud: APP_HOST,
      r: [ROUTE_ALPHA],
    } as DecisionClaims);
    assertAsked(
      await fp.send(APP_HOST, '/alpha', { token: noSid, headers: { [SID_HEADER]: 'sid-fresh' } }),
      'a token without sid (the ALLOW predicate requires the header), even with a spoofed header',
    );
    const unlisted = await signDecision(fp.key, claims('sid-fresh', [ROUTE_BETA]));
    assertAsked(
      await fp.send(APP_HOST, '/alpha', { token: unlisted, headers: { [SID_HEADER]: 'sid-fresh' } }),
      'a header cannot make an unlisted token pass',
    );
  });

  test('without the sid requirement, a token without sid would pass and no revocation could catch it', async () => {
    fp.authz.answer({ kind: 'deny' });
    const noSid = await signDecision(fp.key, {
      iss: ISSUER,
      aud: APP_HOST,
      r: [ROUTE_ALPHA],
    } as DecisionClaims);
    const noSidPasses = async (): Promise<boolean> =>
      (await fp.send(APP_HOST, '/alpha', { token: noSid, headers: { [SID_HEADER]: PRE_REVOKED } })).checks ===
      0;
    try {
      await writeEcdsFile(fp.ecdsDir, 'no-sid-requirement', shadowRbac([PRE_REVOKED], { requireSid: false }));
      await waitFor(noSidPasses, { what: 'the config without the sid requirement', intervalMs: 5 });
      const passed = await fp.send(APP_HOST, '/alpha', {
        token: noSid,
        headers: { [SID_HEADER]: PRE_REVOKED },
      });
      assertFast(passed, 'a token without sid, map skipped (no header), CEL alone allowed');
      assert.equal(passed.upstream?.[SID_HEADER], undefined, 'the spoofed header was dropped all the same');
    } finally {
      await writeEcdsFile(fp.ecdsDir, 'sid-required-again', shadowRbac([PRE_REVOKED]));
      await waitFor(async () => !(await noSidPasses()), { what: 'the sid requirement back', intervalMs: 5 });
    }
  });

  test('tokens of 3.5 KiB and 6 KiB and r lists of 1 and 50 names', async () => {
    fp.authz.answer({ kind: 'deny' });
    const fifty = Array.from({ length: 49 }, (_, i) => `r-route${i}-${'0'.repeat(6)}`);
    assertFast(
      await fp.send(APP_HOST, '/alpha', {
        token: await signDecision(fp.key, claims('s50', [...fifty, ROUTE_ALPHA])),
      }),
      '50 names, alpha last',
    );
    assertAsked(
      await fp.send(APP_HOST, '/alpha', {
        token: await signDecision(fp.key, claims('s50', [...fifty, ROUTE_BETA])),
      }),
      '50 names, no alpha',
    );
    for (const [label, bytes] of [
      ['3.5 KiB', 3500],
      ['6 KiB', 6000],
    ] as const) {
      const base = await signDecision(fp.key, claims(`s-${bytes}`, [ROUTE_ALPHA], { pad: '' }));
      // base64url grows by 4/3 and ES256's signature is fixed: pad the claim to land near `bytes`.
      const pad = 'p'.repeat(Math.floor(((bytes - base.length) * 3) / 4));
      const token = await signDecision(fp.key, claims(`s-${bytes}`, [ROUTE_ALPHA], { pad }));
      assert.ok(Math.abs(token.length - bytes) < 16, `${label}: token is ${token.length} bytes`);
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const hitsBefore = await fp.stat('http.fastpath.jwt_authn.jwt_cache_hit');
        assertFast(await fp.send(APP_HOST, '/alpha', { token, agent }), `${label} first`);
        assertFast(await fp.send(APP_HOST, '/alpha', { token, agent }), `${label} again`);
        const hits = (await fp.stat('http.fastpath.jwt_authn.jwt_cache_hit')) - hitsBefore;
        // jwt_max_token_size (default 4096) bounds what the per-worker cache keeps, not what verifies.
        assert.equal(hits, bytes < 4096 ? 1 : 0, `${label}: jwt cache hits on one connection`);
      } finally {
        agent.destroy();
      }
    }
  });

  test('the assertion header on the slow path: ext_authz overwrites it, or the cookie copy leaks through', async () => {
    const token = await signDecision(fp.key, claims('sid-slow'));
    fp.authz.answer({ kind: 'allow', setHeaders: { [ASSERTION_HEADER]: 'from-authz' } });
    const overwritten = await fp.send(APP_HOST, '/beta', { token, assertion: ASSERTION });
    assert.equal(overwritten.checks, 1);
    assert.equal(
      overwritten.upstream?.[ASSERTION_HEADER],
      'from-authz',
      'ext_authz runs after header_mutation',
    );
    fp.authz.answer({ kind: 'allow' });
    const leaked = await fp.send(APP_HOST, '/beta', { token, assertion: 'client-chosen' });
    assert.equal(leaked.checks, 1);
    assert.equal(
      leaked.upstream?.[ASSERTION_HEADER],
      'client-chosen',
      'an allow that sets nothing keeps the cookie copy',
    );
    const fast = await fp.send(APP_HOST, '/alpha', { token, assertion: 'client-chosen' });
    assertFast(fast, 'fast path with a client-chosen assertion cookie');
    assert.equal(
      fast.upstream?.[ASSERTION_HEADER],
      'client-chosen',
      'the cookie is not bound to the decision token',
    );
    const none = await fp.send(APP_HOST, '/alpha', { token });
    assertFast(none, 'fast path without an assertion cookie');
    assert.equal(
      none.upstream?.[ASSERTION_HEADER],
      undefined,
      'absent metadata: the header is not added at all',
    );
  });

  test('revocation through the ECDS file applies within milliseconds, on open connections, without a drain', async (t) => {
    fp.authz.answer({ kind: 'deny' });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const reloads = 'extension_config_discovery.http_filter.portcullis-fastpath.config_reload';
    try {
      const bystander = await signDecision(fp.key, claims('sid-bystander'));
      const first = await fp.send(APP_HOST, '/alpha', { token: bystander, agent });
      assertFast(first, 'a bystander before');
      const modifiedBefore = await fp.stat('listener_manager.listener_modified');
      const reloadsBefore = await fp.stat(reloads);
      const revoked = [PRE_REVOKED];
      const timings: number[] = [];
      for (let round = 1; round <= 5; round += 1) {
        const sid = `sid-signed-out-${round}`;
        const token = await signDecision(fp.key, claims(sid));
        assertFast(await fp.send(APP_HOST, '/alpha', { token, agent }), `${sid} before`);
        revoked.push(sid);
        const started = performance.now();
        await writeEcdsFile(fp.ecdsDir, `v${round}`, shadowRbac(revoked));
        await waitFor(async () => (await fp.send(APP_HOST, '/alpha', { token, agent })).checks === 1, {
          what: `${sid} to be revoked`,
          timeoutMs: 5000,
          intervalMs: 1,
        });
        timings.push(performance.now() - started);
        assertAsked(await fp.send(APP_HOST, '/alpha', { token, agent }), `${sid} after`);
      }
      t.diagnostic(
        `ECDS file rename -> first request asking ext_authz: ${timings.map((ms) => ms.toFixed(1)).join(', ')} ms`,
      );
      const last = await fp.send(APP_HOST, '/alpha', { token: bystander, agent });
      assertFast(last, 'the bystander after five revocations');
      assert.equal(last.localPort, first.localPort, 'the same keep-alive connection served every request');
      assert.equal(await fp.stat('listener_manager.listener_modified'), modifiedBefore, 'no listener change');
      assert.equal((await fp.stat(reloads)) - reloadsBefore, 5, 'one filter config reload per file');
      // An update Envoy rejects (an empty exact_match_map) keeps the last good map.
      const rejectedBefore = await fp.stat(
        'extension_config_discovery.http_filter.portcullis-fastpath.update_rejected',
      );
      const invalid = shadowRbac([]) as {
        shadow_matcher: { matcher_tree: { exact_match_map: { map: object } } };
      };
      invalid.shadow_matcher.matcher_tree.exact_match_map.map = {};
      await writeEcdsFile(fp.ecdsDir, 'v-invalid', invalid);
      await waitFor(
        async () =>
          (await fp.stat('extension_config_discovery.http_filter.portcullis-fastpath.update_rejected')) >
          rejectedBefore,
        { what: 'Envoy to reject the empty revocation map' },
      );
      const stillRevoked = await signDecision(fp.key, claims('sid-signed-out-5'));
      assertAsked(
        await fp.send(APP_HOST, '/alpha', { token: stillRevoked, agent }),
        'revoked after a rejected update',
      );
      assertFast(
        await fp.send(APP_HOST, '/alpha', { token: bystander, agent }),
        'bystander after a rejected update',
      );
    } finally {
      agent.destroy();
    }
  });
});

describe('with shadow_rules_stat_prefix', () => {
  let prefixed: FastPathEnvoy;
  before(async () => {
    prefixed = await startFastPathEnvoy({ statPrefix: 'fp_' });
  });
  after(async () => {
    await prefixed?.stop();
  });

  test('the shadow metadata keys carry the prefix, and the ext_authz gate must name the prefixed key', async () => {
    prefixed.authz.answer({ kind: 'deny' });
    const token = await signDecision(prefixed.key, claims('sid-prefixed'));
    const alpha = await prefixed.send(APP_HOST, '/alpha', { token });
    assertFast(alpha, 'alpha, gate on fp_shadow_engine_result');
    assert.equal(alpha.upstream?.[PLAIN_RESULT_HEADER], undefined, 'no unprefixed shadow_engine_result');
    assert.equal(alpha.upstream?.[SHADOW_POLICY_HEADER], 'listed', 'fp_shadow_effective_policy_id');
    assertAsked(await prefixed.send(APP_HOST, '/beta', { token }), 'beta');
  });
});

describe('with one audience list for every host', () => {
  let shared: FastPathEnvoy;
  before(async () => {
    shared = await startFastPathEnvoy({ sharedAudience: true });
  });
  after(async () => {
    await shared?.stop();
  });

  test("a token for the other host passes on this one when it lists this host's route", async () => {
    shared.authz.answer({ kind: 'deny' });
    const forOther = await signDecision(shared.key, claims('sid-shared', [ROUTE_ALPHA], { aud: OTHER_HOST }));
    assertFast(await shared.send(APP_HOST, '/alpha', { token: forOther }), 'aud other host, on the app host');
  });
});

describe('without the early header strip', () => {
  let unstripped: FastPathEnvoy;
  before(async () => {
    unstripped = await startFastPathEnvoy({ revoked: [PRE_REVOKED], earlyStrip: false });
  });
  after(async () => {
    await unstripped?.stop();
  });

  test('jwt_authn itself removes a client-sent claim_to_headers header, whatever the token', async () => {
    unstripped.authz.answer({ kind: 'allow' });
    const good = await signDecision(unstripped.key, claims('sid-real'));
    const noSid = await signDecision(unstripped.key, {
      iss: ISSUER,
      aud: APP_HOST,
      r: [ROUTE_ALPHA],
    } as DecisionClaims);
    const cases: [string, string | undefined, string | undefined][] = [
      ['no token', undefined, undefined],
      ['a malformed token', 'a.b.c', undefined],
      ['a token without sid', noSid, undefined],
      ['a good token', good, 'sid-real'],
    ];
    for (const [name, token, seen] of cases) {
      const answer = await unstripped.send(APP_HOST, '/alpha', {
        ...(token === undefined ? {} : { token }),
        headers: { [SID_HEADER]: PRE_REVOKED },
      });
      assert.equal(answer.status, 200, name);
      assert.equal(answer.checks, seen === undefined ? 1 : 0, `${name}: Checks`);
      assert.equal(answer.upstream?.[SID_HEADER], seen, `${name}: the sid the upstream saw`);
    }
  });
});
