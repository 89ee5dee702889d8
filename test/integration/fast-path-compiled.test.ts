// The fast path as Portcullis compiles it (issue 35), in a real Envoy fed by Portcullis's ADS
// server: a real config built by the production pipeline, ext_authz at a counting server, decision
// tokens signed by hand with the build's own decision key. A token that lists the route lets Envoy
// forward with no Check, the upstream getting the token's assertion and claim headers but never the
// decision cookie or the sid header; every token Envoy cannot honour (another route, expired,
// another key, malformed, no sid, revoked, minted at or before the floor) asks Portcullis;
// client-sent identity headers never pass; public routes never replay a token; on the slow path
// Portcullis's answer settles what jwt_authn set. The access log says who decided, and Envoy's
// counters for both sides appear in its Prometheus stats (what Portcullis's /metrics appends).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveDecisionKey } from '../../src/keys/signing-key.js';
import { ASSERTION_HEADER } from '../../src/contract/authz.js';
import { DECISION_SID_HEADER, claimHeaderKey } from '../../src/contract/fast-path.js';
import { decisionClaimHeaders } from '../../src/contract/fast-path.js';
import type { IRRoute } from '../../src/ir/types.js';
import {
  signDecisionToken,
  startCompiledFastPath,
  type CompiledFastPath,
  type Sent,
} from '../support/fast-path-compiled.js';
import { waitFor } from '../support/wait.js';

const HOST = 'app.fpc.test';
const OTHER_HOST = 'other.fpc.test';
/** A stand-in identity assertion: jwt_authn copies the `ja` claim as it is. */
const ASSERTION = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl';
const CLAIMS = { email: 'ada@example.com', groups: 'admins,staff' };

let fp: CompiledFastPath;

before(async () => {
  fp = await startCompiledFastPath(
    {
      jwt_claims_headers: ['email', 'groups'],
      pass_identity_headers: true,
      routes: [
        { from: `https://${HOST}`, prefix: '/alpha', to: 'UPSTREAM', allowed_domains: ['example.com'] },
        { from: `https://${HOST}`, prefix: '/beta', to: 'UPSTREAM', allowed_users: ['ada@example.com'] },
        {
          from: `https://${HOST}`,
          prefix: '/quiet',
          to: 'UPSTREAM',
          allowed_domains: ['example.com'],
          pass_identity_headers: false,
        },
        {
          from: `https://${HOST}`,
          prefix: '/public',
          to: 'UPSTREAM',
          allow_public_unauthenticated_access: true,
        },
        { from: `https://${OTHER_HOST}`, to: 'UPSTREAM', allowed_domains: ['example.com'] },
      ],
    },
    { host: HOST, path: '/public' },
  );
});

after(async () => {
  await fp?.stop();
});

/** The IR route of `host` whose prefix is `prefix`. */
function route(host: string, prefix: string): IRRoute {
  const found = fp.build.ir.virtualHosts
    .filter((vhost) => vhost.domains.includes(host))
    .flatMap((vhost) => vhost.routes)
    .find((candidate) => candidate.match.value === prefix);
  assert.ok(found, `${host}${prefix}`);
  return found;
}

/** The decision name of `host` + `prefix` (replayable routes only). */
function decision(host: string, prefix: string): string {
  const name = route(host, prefix).decisionName;
  assert.ok(name, `${host}${prefix} has a decision name`);
  return name;
}

/** `h`: the claim header values under `c<i>` of the sorted claim header names. */
function claimValues(): Record<string, string> {
  const names = decisionClaimHeaders(fp.build.ir.authorize.claimHeaders);
  const values: Record<string, string> = {
    'x-portcullis-claim-email': CLAIMS.email,
    'x-portcullis-claim-groups': CLAIMS.groups,
  };
  return Object.fromEntries(names.map((name, index) => [claimHeaderKey(index), values[name] as string]));
}

/** A token for `sid` listing `routes`, minted at `v` (now), with the assertion and claim values. */
function token(
  sid: string | undefined,
  routes: readonly string[],
  extra: Record<string, unknown> = {},
): Promise<string> {
  return signDecisionToken(fp.build.keys.decisionKey, {
    ...(sid === undefined ? {} : { sid }),
    r: routes,
    v: Date.now(),
    ja: ASSERTION,
    h: claimValues(),
    ...extra,
  });
}

function assertFast(sent: Sent, label: string): void {
  assert.equal(sent.checks, 0, `${label}: no Check`);
  assert.equal(sent.status, 200, `${label}: the upstream answered`);
  const cookie = String(sent.upstream?.cookie ?? '');
  assert.equal(cookie, 'theme=dark', `${label}: the decision cookie never reaches the upstream`);
  assert.equal(sent.upstream?.[DECISION_SID_HEADER], undefined, `${label}: nor the sid header`);
}

function assertAsked(sent: Sent, label: string): void {
  assert.equal(sent.checks, 1, `${label}: one Check`);
  assert.equal(sent.status, 403, `${label}: the counting authz's deny decided`);
}

describe('the compiled fast path in a real Envoy over ADS', () => {
  test('until the ECDS resource arrives, the default config sends every request to Portcullis', async () => {
    fp.authz.answer({ kind: 'deny' });
    assertAsked(
      await fp.send(HOST, '/alpha', await token('sid-early', [decision(HOST, '/alpha')])),
      'default config',
    );
    await fp.pushRevocations([]);
  });

  test('a token listing the route: no Check, the assertion and claim headers from the token, no credentials', async () => {
    fp.authz.answer({ kind: 'deny' });
    const alpha = decision(HOST, '/alpha');
    const sent = await fp.send(HOST, '/alpha', await token('sid-ada', [alpha]));
    assertFast(sent, 'alpha');
    assert.equal(sent.upstream?.[ASSERTION_HEADER], ASSERTION);
    assert.equal(sent.upstream?.['x-portcullis-claim-email'], CLAIMS.email);
    assert.equal(sent.upstream?.['x-portcullis-claim-groups'], CLAIMS.groups);
    // Any spelling of the host finds the same route (the host-case filter routes it again first).
    assertFast(
      await fp.send(`${HOST.toUpperCase()}.:8443`, '/alpha', await token('sid-ada', [alpha])),
      'HOST.:port',
    );
    // The same token on a route it does not list, and on the other host, asks.
    assertAsked(await fp.send(HOST, '/beta', await token('sid-ada', [alpha])), 'beta, not listed');
    assertAsked(await fp.send(OTHER_HOST, '/', await token('sid-ada', [alpha])), 'the other host');
    // The control: the same request without a token asks.
    assertAsked(await fp.send(HOST, '/alpha'), 'alpha without a token');
  });

  test('a route that does not pass identity headers gets none from the token', async () => {
    const sent = await fp.send(HOST, '/quiet', await token('sid-ada', [decision(HOST, '/quiet')]));
    assertFast(sent, 'quiet');
    assert.equal(sent.upstream?.[ASSERTION_HEADER], undefined);
    assert.equal(sent.upstream?.['x-portcullis-claim-email'], undefined);
    assert.equal(sent.upstream?.['x-portcullis-claim-groups'], undefined);
  });

  test('every token Envoy cannot honour asks Portcullis', async () => {
    fp.authz.answer({ kind: 'deny' });
    const alpha = decision(HOST, '/alpha');
    const now = Math.floor(Date.now() / 1000);
    const good = await token('sid-good', [alpha]);
    const [header, , signature] = good.split('.');
    const otherKey = deriveDecisionKey(new Uint8Array(32).fill(99));
    const wrongKey = { ...otherKey, kid: fp.build.keys.decisionKey.kid };
    const cases: [string, string][] = [
      ['listing another route', await token('sid-good', [decision(HOST, '/beta')])],
      ["listing the other host's route", await token('sid-good', [decision(OTHER_HOST, '/')])],
      ['expired beyond the skew', await token('sid-good', [alpha], { iat: now - 200, exp: now - 30 })],
      ['signed by another key', await signDecisionTokenWith(wrongKey, alpha)],
      ['malformed', 'not.a-token'],
      [
        'a good signature over another payload',
        `${header}.${Buffer.from('{"sid":"x","r":[]}').toString('base64url')}.${signature}`,
      ],
      ['another issuer', await token('sid-good', [alpha], { iss: 'someone-else' })],
      ['r a string', await token('sid-good', alpha as unknown as string[])],
      ['no sid', await token(undefined, [alpha])],
    ];
    for (const [label, value] of cases) assertAsked(await fp.send(HOST, '/alpha', value), label);
    assertAsked(
      await fp.send(HOST, '/alpha', await token(undefined, [alpha]), { [DECISION_SID_HEADER]: 'sid-good' }),
      'no sid, with a client-sent sid header',
    );
    assertFast(await fp.send(HOST, '/alpha', good), 'the good token, as a control');
  });

  test('a revocation refuses tokens minted up to its notBeforeMs, and only those', async () => {
    fp.authz.answer({ kind: 'deny' });
    const alpha = decision(HOST, '/alpha');
    const mintedMs = Date.now();
    const old = await token('sid-revoked', [alpha], { v: mintedMs });
    const bystander = await token('sid-bystander', [alpha], { v: mintedMs });
    assertFast(await fp.send(HOST, '/alpha', old), 'before the revocation');
    await fp.pushRevocations([{ sid: 'sid-revoked', notBeforeMs: mintedMs + 1 }]);
    assertAsked(await fp.send(HOST, '/alpha', old), 'revoked');
    assertAsked(
      await fp.send(HOST, '/alpha', await token('sid-revoked', [alpha], { v: mintedMs + 1 })),
      'minted exactly at notBeforeMs',
    );
    assertFast(
      await fp.send(HOST, '/alpha', await token('sid-revoked', [alpha], { v: mintedMs + 2 })),
      'minted after the revocation',
    );
    assertAsked(
      await fp.send(HOST, '/beta', await token('sid-revoked', [alpha], { v: mintedMs + 2 })),
      'minted after the revocation, on a route it does not list',
    );
    for (const v of [undefined, String(mintedMs + 2)])
      assertAsked(
        await fp.send(HOST, '/alpha', await token('sid-revoked', [alpha], { v })),
        `a revoked session's token with v ${JSON.stringify(v)} (no number: refused)`,
      );
    assertFast(await fp.send(HOST, '/alpha', bystander), 'another session');
    await fp.pushRevocations([], { refuseAll: true });
    assertAsked(await fp.send(HOST, '/alpha', bystander), 'refusing all: every token asks');
    await fp.pushRevocations([]);
    assertFast(await fp.send(HOST, '/alpha', old), 'the revocation lifted');
  });

  test('a floor refuses every token minted up to it, whatever its session, and passes later ones', async () => {
    fp.authz.answer({ kind: 'deny' });
    const alpha = decision(HOST, '/alpha');
    const floorMs = Date.now();
    const minted = (sid: string, v: unknown, routes = [alpha]) => token(sid, routes, { v });
    const early = await minted('sid-floor', floorMs - 5_000);
    assertFast(await fp.send(HOST, '/alpha', early), 'no floor yet');
    await fp.pushRevocations(
      [
        { sid: 'sid-below', notBeforeMs: floorMs - 1_000 },
        { sid: 'sid-above', notBeforeMs: floorMs + 1_000 },
      ],
      { refuseAll: false, floorMs },
    );
    assertAsked(await fp.send(HOST, '/alpha', early), 'minted before the floor');
    assertAsked(await fp.send(HOST, '/alpha', await minted('sid-other', floorMs)), 'minted at the floor');
    assertFast(await fp.send(HOST, '/alpha', await minted('sid-floor', floorMs + 1)), 'minted after it');
    assertFast(await fp.send(HOST, '/alpha', await minted('sid-other', floorMs + 1)), 'any session');
    assertAsked(
      await fp.send(HOST, '/beta', await minted('sid-floor', floorMs + 1)),
      'minted after it, on a route it does not list',
    );
    for (const v of [undefined, String(floorMs + 1)])
      assertAsked(
        await fp.send(HOST, '/alpha', await minted('sid-floor', v)),
        `v ${JSON.stringify(v)} (no number: refused)`,
      );
    // A revoked session below the floor is held to the floor, one above it to its own notBefore.
    assertAsked(await fp.send(HOST, '/alpha', await minted('sid-below', floorMs - 500)), 'below: at nb+500');
    assertFast(
      await fp.send(HOST, '/alpha', await minted('sid-below', floorMs + 1)),
      'below: after the floor',
    );
    assertAsked(
      await fp.send(HOST, '/alpha', await minted('sid-above', floorMs + 1)),
      'above: after the floor',
    );
    assertFast(
      await fp.send(HOST, '/alpha', await minted('sid-above', floorMs + 1_001)),
      'above: after its own',
    );
    await fp.pushRevocations([]);
    assertFast(await fp.send(HOST, '/alpha', early), 'the floor lifted');
  });

  test('client-sent sid and identity headers never reach the upstream', async () => {
    fp.authz.answer({ kind: 'allow' });
    const forged = {
      [DECISION_SID_HEADER]: 'sid-forged',
      [ASSERTION_HEADER]: 'forged',
      'x-portcullis-claim-email': 'eve@example.com',
    };
    const slow = await fp.send(HOST, '/alpha', undefined, forged);
    assert.equal(slow.checks, 1);
    assert.equal(slow.status, 200);
    assert.equal(slow.upstream?.[DECISION_SID_HEADER], undefined);
    assert.equal(slow.upstream?.[ASSERTION_HEADER], undefined);
    assert.equal(slow.upstream?.['x-portcullis-claim-email'], undefined);
    fp.authz.answer({ kind: 'deny' });
    const fast = await fp.send(HOST, '/alpha', await token('sid-ada', [decision(HOST, '/alpha')]), forged);
    assertFast(fast, 'a good token beside forged headers');
    assert.equal(fast.upstream?.[ASSERTION_HEADER], ASSERTION);
    assert.equal(fast.upstream?.['x-portcullis-claim-email'], CLAIMS.email);
  });

  test('a public route never replays a token: its upstream gets none of what jwt_authn set', async () => {
    const sent = await fp.send(HOST, '/public', await token('sid-ada', [decision(HOST, '/alpha')]));
    assert.equal(sent.status, 200);
    assert.equal(sent.checks, 0, 'ext_authz is off on public routes anyway');
    assert.equal(String(sent.upstream?.cookie), 'theme=dark', 'the decision cookie is stripped there too');
    assert.equal(sent.upstream?.[DECISION_SID_HEADER], undefined);
    assert.equal(sent.upstream?.[ASSERTION_HEADER], undefined);
    assert.equal(sent.upstream?.['x-portcullis-claim-email'], undefined);
    assert.equal(sent.upstream?.['x-portcullis-claim-groups'], undefined);
  });

  test("on the slow path the Check sees what jwt_authn set, and Portcullis's answer decides what goes upstream", async () => {
    fp.authz.answer({
      kind: 'allow',
      removeReserved: true,
      setHeaders: { [ASSERTION_HEADER]: 'from-portcullis' },
    });
    const seen = fp.authz.seen.length;
    // A valid token on a route it does not list: jwt_authn set its headers, then ext_authz ran.
    const sent = await fp.send(HOST, '/beta', await token('sid-ada', [decision(HOST, '/alpha')]));
    assert.equal(sent.checks, 1);
    assert.equal(sent.status, 200);
    const check = fp.authz.seen[seen];
    assert.equal(check?.headers[ASSERTION_HEADER], ASSERTION, 'the Check carries the token assertion');
    assert.equal(check?.headers['x-portcullis-claim-email'], CLAIMS.email);
    assert.equal(sent.upstream?.[ASSERTION_HEADER], 'from-portcullis');
    assert.equal(sent.upstream?.['x-portcullis-claim-email'], undefined, 'removed by the answer');
    assert.equal(sent.upstream?.[DECISION_SID_HEADER], undefined);
    fp.authz.answer({ kind: 'deny' });
  });

  test('the access log says who decided; the counters of both sides are in the Prometheus stats', async () => {
    fp.authz.answer({ kind: 'deny' });
    const alpha = decision(HOST, '/alpha');
    await fp.send(HOST, '/alpha/fast', await token('sid-logged', [alpha]));
    await fp.send(HOST, '/alpha/slow');
    await fp.send(HOST, '/public/logged');
    // Each line is found by its path (the log leaves queries out): Envoy's workers flush their
    // access-log buffers on their own, so the order need not be the order the requests were sent in.
    const lines = await waitFor(
      async () => {
        const log = fp.accessLog();
        const last = (path: string) => log.filter((line) => line.path === path).at(-1);
        const found = [last('/alpha/fast'), last('/alpha/slow'), last('/public/logged')];
        return found.every((line) => line !== undefined) ? found : undefined;
      },
      { what: 'the three access-log lines' },
    );
    const [fast, slow, publicLine] = lines as [
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    assert.equal(fast.decided_by, 'envoy');
    assert.equal(fast.decision_sid, 'sid-logged');
    assert.equal(slow.decided_by, 'portcullis');
    assert.equal(slow.decision_sid, undefined);
    assert.equal(publicLine.decided_by, 'portcullis', "a public route: Portcullis's config let it through");
    const prometheus = await fp.envoy.admin('/stats/prometheus');
    for (const series of [
      /^envoy_http_rbac_shadow_allowed\{envoy_rbac_http_prefix="fast_path_",envoy_http_conn_manager_prefix="ingress"\} [1-9]/m,
      /^envoy_http_rbac_shadow_denied\{envoy_rbac_http_prefix="fast_path_",envoy_http_conn_manager_prefix="ingress"\} [1-9]/m,
      /^envoy_http_ext_authz_denied\{envoy_http_conn_manager_prefix="ingress"\} [1-9]/m,
      /^envoy_http_ext_authz_ok\{envoy_http_conn_manager_prefix="ingress"\} [1-9]/m,
      /^envoy_http_jwt_authn_jwt_cache_miss\{envoy_http_conn_manager_prefix="ingress"\} [1-9]/m,
    ])
      assert.match(prometheus, series);
  });
});

/** A token listing `route`, signed with `key`. */
function signDecisionTokenWith(
  key: ReturnType<typeof deriveDecisionKey>,
  routeName: string,
): Promise<string> {
  return signDecisionToken(key, {
    sid: 'sid-good',
    r: [routeName],
    v: Date.now(),
    ja: ASSERTION,
    h: claimValues(),
  });
}
