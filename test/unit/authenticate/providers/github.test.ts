// The GitHub ProviderClient against a tiny FAKE GitHub on loopback (GitHub itself cannot run here):
// the fake implements only what the client uses (authorize redirect, the token endpoint with PKCE
// and client_secret_post, /user, /user/emails, /user/teams and /user/orgs with their `per_page` and
// `page` paging) the way GitHub's docs describe them, including the token endpoint's habit of
// answering errors with HTTP 200.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { randomPKCECodeVerifier } from 'openid-client';
import { createProviderClient } from '../../../../src/authenticate/providers/client.js';
import { githubGroups } from '../../../../src/authenticate/providers/github.js';
import { IdpError } from '../../../../src/authenticate/types.js';
import type { FlowChecks, ProviderClient } from '../../../../src/authenticate/types.js';

const REDIRECT = 'http://127.0.0.1:1/oauth2/callback';

interface FakeGithub {
  readonly url: string;
  /** Status the API answers with instead of its data (0: normal). */
  apiStatus: number;
  /** Whether /user/emails says the primary address is verified. */
  primaryVerified: boolean;
  /** The user's teams, as `org/slug`, that /user/teams lists. */
  teams: string[];
  /** Status /user/teams answers with instead of its data (0: normal), and from which page on. */
  teamsStatus: number;
  teamsStatusFromPage: number;
  /** The `page` numbers /user/teams was asked for, in order. */
  readonly teamPages: number[];
  readonly server: Server;
}

const TEAMS = ['github/justice-league', 'octo-org/owners', 'github/a-team'];

/** One page of `items` as GitHub pages a list: `per_page` (default 30, at most 100) and `page` from 1. */
function page<T>(items: readonly T[], url: URL): T[] {
  const size = Math.min(Number(url.searchParams.get('per_page') ?? 30), 100);
  const number = Number(url.searchParams.get('page') ?? 1);
  return items.slice((number - 1) * size, number * size);
}

async function startFakeGithub(): Promise<FakeGithub> {
  const challenges = new Map<string, string>();
  const fake: FakeGithub = {
    url: '',
    apiStatus: 0,
    primaryVerified: true,
    teams: [...TEAMS],
    teamsStatus: 0,
    teamsStatusFromPage: 1,
    teamPages: [],
    server: createServer(),
  };
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  fake.server.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.pathname === '/login/oauth/authorize') {
      const code = `code-${challenges.size}`;
      challenges.set(code, url.searchParams.get('code_challenge') ?? '');
      const back = new URL(url.searchParams.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === '/login/oauth/access_token') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const form = new URLSearchParams(Buffer.concat(chunks).toString());
        const challenge = challenges.get(form.get('code') ?? '');
        challenges.delete(form.get('code') ?? '');
        const verifier = createHash('sha256')
          .update(form.get('code_verifier') ?? '')
          .digest('base64url');
        const ok =
          form.get('client_id') === 'gh-client' &&
          form.get('client_secret') === 'gh-secret' &&
          challenge === verifier;
        if (!ok)
          json(res, 200, {
            error: 'bad_verification_code',
            error_description: 'The code passed is incorrect or expired.',
          });
        else
          json(res, 200, { access_token: 'gho_token', token_type: 'bearer', scope: 'user:email,read:org' });
      });
      return;
    }
    if (req.headers.authorization !== 'Bearer gho_token')
      return json(res, 401, { message: 'Bad credentials' });
    if (fake.apiStatus !== 0) return json(res, fake.apiStatus, { message: 'fake failure' });
    if (url.pathname === '/api/v3/user')
      return json(res, 200, {
        id: 583231,
        login: 'octocat',
        name: null,
        email: null,
        avatar_url: 'https://a/o.png',
      });
    if (url.pathname === '/api/v3/user/emails')
      return json(res, 200, [
        { email: 'old@example.com', primary: false, verified: true },
        { email: 'octocat@example.com', primary: true, verified: fake.primaryVerified },
      ]);
    if (url.pathname === '/api/v3/user/orgs')
      return json(res, 200, page([{ login: 'github' }, { login: 'octo-org' }], url));
    if (url.pathname === '/api/v3/user/teams') {
      const number = Number(url.searchParams.get('page') ?? 1);
      fake.teamPages.push(number);
      if (fake.teamsStatus !== 0 && number >= fake.teamsStatusFromPage)
        return json(res, fake.teamsStatus, { message: 'fake failure' });
      const teams = fake.teams.map((name, id) => {
        const [org, slug] = name.split('/');
        return { id, slug, name: slug?.toUpperCase(), organization: { login: org, id: 1 } };
      });
      return json(res, 200, page(teams, url));
    }
    json(res, 404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
  return Object.assign(fake, { url: `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}` });
}

describe('GitHub provider client (against a fake GitHub)', () => {
  let github: FakeGithub;
  let client: ProviderClient;
  before(async () => {
    github = await startFakeGithub();
    client = createProviderClient(
      {
        id: 'gh',
        provider: 'github',
        providerUrl: new URL(github.url),
        clientId: 'gh-client',
        clientSecret: 'gh-secret',
        scopes: undefined,
        requestParams: { allow_signup: 'false' },
      },
      { allowInsecureRequests: true, timeoutMs: 2_000 },
    );
  });
  after(() => new Promise<void>((resolve) => github.server.close(() => resolve())));

  async function authorize(checks: FlowChecks): Promise<{ url: URL; callback: URL }> {
    const url = await client.authorizationUrl(REDIRECT, checks);
    const response = await fetch(url, { redirect: 'manual' });
    return { url, callback: new URL(response.headers.get('location') ?? '') };
  }

  const flow = (): FlowChecks => ({
    state: `s-${Math.random()}`,
    nonce: 'unused',
    codeVerifier: randomPKCECodeVerifier(),
  });

  test('the authorization URL: GitHub scopes, state, PKCE S256, request params, no nonce', async () => {
    const { url } = await authorize(flow());
    assert.equal(url.origin + url.pathname, `${github.url}/login/oauth/authorize`);
    assert.equal(url.searchParams.get('scope'), 'user:email read:org');
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(url.searchParams.get('allow_signup'), 'false');
    assert.equal(url.searchParams.get('nonce'), null);
    assert.equal(client.formPost, false);
  });

  test('the code exchange gives the user from the REST API', async () => {
    const checks = flow();
    const { callback } = await authorize(checks);
    const result = await client.exchangeCode(callback, REDIRECT, checks);
    assert.equal(result.userId, '583231');
    assert.equal(result.accessToken, 'gho_token');
    assert.equal(result.idToken, undefined);
    assert.deepEqual(result.claims, {
      sub: '583231',
      preferred_username: 'octocat',
      name: 'octocat',
      email: 'octocat@example.com',
      email_verified: true,
      picture: 'https://a/o.png',
      groups: ['github/justice-league', 'octo-org/owners', 'github/a-team', 'github', 'octo-org'],
    });
  });

  /** Signs in through the fake and gives the groups claim. */
  async function groups(): Promise<unknown> {
    const checks = flow();
    const { callback } = await authorize(checks);
    return (await client.exchangeCode(callback, REDIRECT, checks)).claims['groups'];
  }

  test('groups: every team as org/slug across pages, then the org logins (issue 37 item 4)', async (t) => {
    t.after(() => {
      github.teams = [...TEAMS];
      github.teamPages.length = 0;
    });
    github.teams = Array.from({ length: 250 }, (_, i) => `org-${i % 3}/team-${i}`);
    github.teamPages.length = 0;
    const claim = (await groups()) as string[];
    assert.deepEqual(github.teamPages, [1, 2, 3]);
    assert.deepEqual(claim, [...github.teams, 'github', 'octo-org']);
    // A list that ends exactly on a page boundary asks for the next page once and stops at the empty one.
    github.teams = github.teams.slice(0, 200);
    github.teamPages.length = 0;
    assert.equal(((await groups()) as string[]).length, 202);
    assert.deepEqual(github.teamPages, [1, 2, 3]);
  });

  test('groups: at most 10 pages of teams are read', async (t) => {
    t.after(() => {
      github.teams = [...TEAMS];
      github.teamPages.length = 0;
    });
    github.teams = Array.from({ length: 1050 }, (_, i) => `org/team-${i}`);
    github.teamPages.length = 0;
    const claim = (await groups()) as string[];
    assert.deepEqual(github.teamPages, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.deepEqual(claim.slice(-3), ['org/team-999', 'github', 'octo-org']);
  });

  test('githubGroups skips entries without a slug or organization and keeps each group once', () => {
    assert.deepEqual(
      githubGroups(
        [
          { slug: 'a', organization: { login: 'o' } },
          { slug: 'a', organization: { login: 'o' } },
          { slug: 'b', organization: null },
          { organization: { login: 'o' } },
          null,
        ],
        [{ login: 'o' }, { login: '' }, {}],
      ),
      ['o/a', 'o'],
    );
  });

  test('groups: without access to teams (no read:org) only the org logins; a later page failing fails the sign-in', async (t) => {
    t.after(() => {
      github.teamsStatus = 0;
      github.teamsStatusFromPage = 1;
      github.teams = [...TEAMS];
    });
    github.teamsStatus = 403;
    assert.deepEqual(await groups(), ['github', 'octo-org']);
    github.teams = Array.from({ length: 150 }, (_, i) => `org/team-${i}`);
    github.teamsStatusFromPage = 2;
    const checks = flow();
    const { callback } = await authorize(checks);
    await assert.rejects(client.exchangeCode(callback, REDIRECT, checks), isIdp('refused'));
  });

  test('an unverified primary address is unverified unless the client trusts it (issue 33 item 7)', async (t) => {
    t.after(() => {
      github.primaryVerified = true;
    });
    const verified = flow();
    const first = await client.exchangeCode((await authorize(verified)).callback, REDIRECT, verified);
    assert.equal(first.emailVerified, true);
    github.primaryVerified = false;
    const checks = flow();
    const result = await client.exchangeCode((await authorize(checks)).callback, REDIRECT, checks);
    assert.equal(result.claims['email'], 'octocat@example.com');
    assert.equal(result.emailVerified, false);
    const trusting = createProviderClient(
      { ...client.config, trustUnverifiedEmail: true },
      { allowInsecureRequests: true, timeoutMs: 2_000 },
    );
    const again = flow();
    const url = await trusting.authorizationUrl(REDIRECT, again);
    const callback = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');
    assert.equal((await trusting.exchangeCode(callback, REDIRECT, again)).emailVerified, true);
  });

  test('a wrong state or verifier, and a replayed code, are refused', async () => {
    const checks = flow();
    const { callback } = await authorize(checks);
    await assert.rejects(
      client.exchangeCode(callback, REDIRECT, { ...checks, state: 'other' }),
      isIdp('refused'),
    );
    await assert.rejects(
      client.exchangeCode(callback, REDIRECT, { ...checks, codeVerifier: randomPKCECodeVerifier() }),
      isIdp('refused'),
    );
    await assert.rejects(client.exchangeCode(callback, REDIRECT, checks), isIdp('refused'));
  });

  test('an API failure: 5xx is unavailable, 401 refused', async () => {
    for (const [status, kind] of [
      [502, 'unavailable'],
      [401, 'refused'],
    ] as const) {
      const checks = flow();
      const { callback } = await authorize(checks);
      github.apiStatus = status;
      try {
        await assert.rejects(client.exchangeCode(callback, REDIRECT, checks), isIdp(kind));
      } finally {
        github.apiStatus = 0;
      }
    }
  });

  test('no revocation endpoint and no end-session endpoint', async () => {
    await client.revoke('gho_token', 'access_token');
    assert.equal(await client.endSessionUrl(undefined, 'http://127.0.0.1:1/out'), undefined);
  });
});

function isIdp(kind: IdpError['kind']) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof IdpError, String(err));
    assert.equal(err.kind, kind, err.message);
    return true;
  };
}
