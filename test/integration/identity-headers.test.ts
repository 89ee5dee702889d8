// Client-sent identity headers never reach an upstream unless the route passes them by name
// (issue 33, item 10), through a real Envoy configured by Portcullis: `Impersonate-*`,
// `X-Forwarded-User` and kin, `X-Auth-Request-*` (the list in src/shared/identity-headers.ts), in
// several letter cases, x every host spelling (case, trailing dot, port) x public and protected
// routes x HTTP/1.1 and HTTP/2 (h2c), under per-host and single route tables. A route with
// `pass_request_identity_headers` gets exactly the names it lists, as sent, and still loses the rest.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type ClientHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { startPortcullis, type TestPortcullis, adaSession } from '../support/portcullis.js';
import { waitFor } from '../support/wait.js';
import { http1Fields, http2Fields, type Fields } from '../support/field-requests.js';
import { isIdentityHeader } from '../../src/shared/identity-headers.js';

const PUBLIC_HOST = 'pub.example.com';
const PROTECTED_HOST = 'app.example.com';
const PASSING_HOST = 'kube.example.com';
/** What the passing routes list (in the config's letter case) and so must receive. */
const PASSED_ON_HOST = ['Impersonate-User', 'X-Forwarded-Email'];
const PASSED_ON_PATH = ['impersonate-group'];

let upstream: Server;
let upstreamUrl: string;
let portcullis: TestPortcullis;
let handle: string;

const ada = adaSession();

function routes(extra: Record<string, unknown>[] = []): Record<string, unknown>[] {
  return [
    { from: `https://${PUBLIC_HOST}`, to: upstreamUrl, allow_public_unauthenticated_access: true },
    {
      from: `https://${PROTECTED_HOST}`,
      prefix: '/kube',
      to: upstreamUrl,
      allowed_users: ['ada@example.com'],
      pass_request_identity_headers: PASSED_ON_PATH,
    },
    { from: `https://${PROTECTED_HOST}`, to: upstreamUrl, allowed_users: ['ada@example.com'] },
    {
      from: `https://${PASSING_HOST}`,
      to: upstreamUrl,
      allow_public_unauthenticated_access: true,
      pass_request_identity_headers: PASSED_ON_HOST,
    },
    ...extra,
  ];
}

before(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headersDistinct));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  portcullis = await startPortcullis({ routes: routes() });
  await portcullis.running.sessions.put(ada);
  handle = portcullis.running.authorize.handles().issue(ada.id);
});

after(async () => {
  await portcullis?.stop();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

/** Every identity header a client might forge, in mixed letter cases, one of them twice. */
const FORGED: Fields = [
  ['Impersonate-User', 'system:admin'],
  ['IMPERSONATE-GROUP', 'system:masters'],
  ['impersonate-group', 'cluster-admins'],
  ['Impersonate-Uid', '0'],
  ['Impersonate-Extra-Scopes', 'all'],
  ['X-Forwarded-User', 'root'],
  ['x-forwarded-email', 'root@example.com'],
  ['X-FORWARDED-GROUPS', 'admins'],
  ['X-Forwarded-Preferred-Username', 'root'],
  ['X-Forwarded-Access-Token', 'forged'],
  ['X-Auth-Request-User', 'root'],
  ['x-auth-request-email', 'root@example.com'],
  ['X-Auth-Request-Access-Token', 'forged'],
  ['X-Remote-User', 'root'],
  ['X-Remote-Group', 'admins'],
  ['X-Remote-Extra-Scopes', 'all'],
  ['Remote-User', 'root'],
  ['X-Ordinary', 'kept'],
];

/** What the upstream saw, or the status when the request did not reach it. */
interface Answer {
  readonly status: number;
  readonly seen: Record<string, string[]> | undefined;
}

function answer(status: number, body: string): Answer {
  return { status, seen: status === 200 ? (JSON.parse(body) as Record<string, string[]>) : undefined };
}

async function http1(host: string, path: string, fields: Fields): Promise<Answer> {
  const { status, body } = await http1Fields(portcullis.proxyPort, host, path, fields);
  return answer(status, body);
}

async function http2(
  session: ClientHttp2Session,
  authority: string,
  path: string,
  fields: Fields,
): Promise<Answer> {
  const { status, body } = await http2Fields(session, authority, path, fields);
  return answer(status, body);
}

function assertStripped(
  seen: Record<string, string[]> | undefined,
  passed: readonly string[],
  label: string,
): void {
  assert.ok(seen !== undefined, `${label}: the request reached the upstream`);
  const wanted = passed.map((name) => name.toLowerCase());
  const identity = Object.keys(seen).filter(isIdentityHeader).sort();
  assert.deepEqual(identity, [...wanted].sort(), `${label}: identity headers the upstream saw`);
  for (const name of wanted) {
    const sent = FORGED.filter(([key]) => key.toLowerCase() === name).map(([, value]) => value);
    assert.deepEqual(seen[name], sent, `${label}: ${name} passed as sent`);
  }
  assert.deepEqual(seen['x-ordinary'], ['kept'], `${label}: an ordinary header`);
}

function hostForms(host: string): { name: string; host: string }[] {
  return [
    { name: 'lower', host },
    { name: 'UPPER', host: host.toUpperCase() },
    { name: 'trailing dot', host: `${host}.` },
    { name: 'port', host: `${host}:8443` },
    { name: 'UPPER, dot and port', host: `${host.toUpperCase()}.:8443` },
  ];
}

/** Host, path, whether it needs the session, and what it passes. */
const TARGETS = [
  { kind: 'public', host: PUBLIC_HOST, path: '/', session: false, passed: [] as string[] },
  { kind: 'protected', host: PROTECTED_HOST, path: '/', session: true, passed: [] as string[] },
  { kind: 'passing public', host: PASSING_HOST, path: '/', session: false, passed: PASSED_ON_HOST },
  {
    kind: 'passing protected path',
    host: PROTECTED_HOST,
    path: '/kube/x',
    session: true,
    passed: PASSED_ON_PATH,
  },
] as const;

function matrix(mode: string): void {
  for (const target of TARGETS) {
    // The handle exists once `before` has run.
    const sent = (): Fields => (target.session ? [...FORGED, ['cookie', `_portcullis=${handle}`]] : FORGED);
    for (const form of hostForms(target.host)) {
      test(`${mode}: ${target.kind} route, ${form.name} host (${form.host}), HTTP/1.1 and HTTP/2`, async () => {
        const one = await http1(form.host, target.path, sent());
        assert.equal(one.status, 200, 'HTTP/1.1');
        assertStripped(one.seen, target.passed, 'HTTP/1.1');
        const session = connect(`http://127.0.0.1:${portcullis.proxyPort}`);
        try {
          const two = await http2(session, form.host, target.path, sent());
          assert.equal(two.status, 200, 'HTTP/2');
          assertStripped(two.seen, target.passed, 'HTTP/2');
        } finally {
          session.close();
        }
      });
    }
  }
}

describe('per-host route tables', () => {
  matrix('per-host');
});

describe('a single route table (a wildcard host)', () => {
  before(async () => {
    portcullis.writeConfig({
      ...portcullis.baseConfig(),
      routes: routes([
        { from: 'https://*.wild.example.com', to: upstreamUrl, allow_public_unauthenticated_access: true },
      ]),
    });
    await waitFor(async () => (await http1('x.wild.example.com', '/', [])).status === 200, {
      what: 'the wildcard route',
    });
    await portcullis.waitForEnvoyToApply('the single route table');
  });

  matrix('single');

  test('single: the wildcard route strips them too', async () => {
    assertStripped((await http1('X.Wild.Example.com.:8443', '/', FORGED)).seen, [], 'wildcard');
  });
});
