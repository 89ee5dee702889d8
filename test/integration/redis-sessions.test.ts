// Sessions in a real Redis through the whole stack (issue 25, Reliability; security-threats.md 4.2):
// Portcullis all-in-one with its real Envoy, the test IdP and Debian's redis-server with an
// append-only file (fsync on every write), so a stopped and started Redis keeps its data as a
// restarted production Redis would. One rig, in order: what Redis holds after a sign-in reveals
// nothing (encryption at rest); Redis hung with its connections open (SIGSTOP, as in a partition:
// the grace starts all the same, then 503 and /readyz unready; SIGCONT: the same cookie works;
// issue 33 item 4); Redis down (cached sessions work for the grace, then a bounded 503 for
// session-bound requests, never a sign-in redirect or a cleared cookie, public routes serve, a new
// sign-in ends on a clear 503 page; Redis back: the same cookie works, no new sign-in); and a
// Portcullis restart on the same Redis and secrets keeps the session.
import assert from 'node:assert/strict';
import { get as httpGet } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { createClient } from 'redis';
import { openTokens } from '../../src/session/session-tokens.js';
import { completeLogin } from '../support/idp-login.js';
import { startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { freePort } from '../support/ports.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { SESSION_COOKIE, startSignInRig, type Answer, type EnvoyClient } from '../support/sign-in-envoy.js';
import type { SignInRig } from '../support/sign-in-envoy.js';
import { ALICE } from '../support/test-idp.js';
import { waitFor } from '../support/wait.js';

/** A session-bound answer while Redis is down must come within this (ms); Envoy's ext_authz timeout is larger. */
const ANSWER_BOUND_MS = 1_500;

let redis: TestRedisServer;
let rig: SignInRig;
let client: EnvoyClient;
let sessionId: string;
let metricsPort: number;

before(async () => {
  redis = await startRedisServer({ extraConfig: ['appendonly yes', 'appendfsync always'] });
  metricsPort = await freePort();
  rig = await startSignInRig({
    extraConfig: {
      databroker_storage_type: 'redis',
      databroker_storage_connection_string: redis.url,
      databroker_outage_grace: '2s',
      metrics_address: `127.0.0.1:${metricsPort}`,
    },
  });
  client = rig.client();
  ({ sessionId } = await rig.signIn(client, '/start'));
});

after(async () => {
  redis?.resume(); // a failed hang test must not leave redis-server stopped
  await rig?.stop();
  await redis?.close();
});

/** `/readyz`'s status and its session_store check. */
function readyz(): Promise<{ status: number; sessionStore: string | undefined }> {
  return new Promise((resolve, reject) => {
    httpGet({ host: '127.0.0.1', port: metricsPort, path: '/readyz', timeout: 5_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          checks?: { session_store?: string };
        };
        resolve({ status: res.statusCode ?? 0, sessionStore: body.checks?.session_store });
      });
    }).on('error', reject);
  });
}

/** Every key of the Redis and every value it holds (strings, hash fields and values, set members). */
async function redisDump(): Promise<string[]> {
  const raw = createClient({ url: redis.url });
  await raw.connect();
  try {
    const entries: string[] = [];
    for await (const keys of raw.scanIterator({ COUNT: 1000 })) {
      for (const key of keys) {
        entries.push(key);
        const type = await raw.type(key);
        if (type === 'string') entries.push((await raw.get(key)) ?? '');
        else if (type === 'hash') entries.push(...Object.entries(await raw.hGetAll(key)).flat());
        else if (type === 'zset') entries.push(...(await raw.zRange(key, 0, -1)));
        else if (type === 'set') entries.push(...(await raw.sMembers(key)));
        else if (type === 'list') entries.push(...(await raw.lRange(key, 0, -1)));
        else assert.fail(`key ${key} has a type the dump does not read: ${type}`);
      }
    }
    return entries;
  } finally {
    raw.destroy();
  }
}

/** GET through Envoy, timed. */
async function timed(
  who: EnvoyClient,
  url: URL | string,
  headers: Record<string, string> = {},
): Promise<{ answer: Answer; ms: number }> {
  const started = performance.now();
  const answer = await who.get(url, headers);
  return { answer, ms: performance.now() - started };
}

/** The Set-Cookie values of `answer` that name the session cookie (set or clear it). */
function sessionCookies(answer: Answer): string[] {
  return answer.setCookies.filter((value) => value.trimStart().startsWith(`${SESSION_COOKIE}=`));
}

/** Asserts `answer` is the store-outage 503 for `kind`, in time and without touching the session cookie. */
function assertOutage(answer: Answer, ms: number, kind: 'json' | 'html', what: string): void {
  assert.equal(answer.status, 503, `${what}: ${answer.status} ${answer.body.slice(0, 200)}`);
  assert.ok(ms < ANSWER_BOUND_MS, `${what} took ${ms.toFixed(0)} ms`);
  assert.deepEqual(sessionCookies(answer), [], `${what} touched the session cookie`);
  assert.equal(answer.headers.location, undefined, `${what} redirected`);
  if (kind === 'json') {
    assert.match(String(answer.headers['content-type']), /application\/json/);
    const body = JSON.parse(answer.body) as { error?: string; reason?: string };
    assert.match(body.reason ?? '', /temporarily unavailable/);
  } else {
    assert.match(String(answer.headers['content-type']), /text\/html/);
    assert.match(answer.body, /temporarily unavailable/);
  }
}

describe('sessions in Redis through Envoy and the real sign-in', () => {
  it('what Redis holds after a sign-in reveals no email, claim or token', async () => {
    const session = await rig.portcullis.running.sessions.get(sessionId);
    assert.ok(session?.tokens !== undefined, 'the signed-in session has tokens');
    const secret = Buffer.from(String(rig.config['shared_secret']), 'base64');
    const tokens = await openTokens(secret, sessionId, session.tokens);
    const secrets = [
      ALICE.email ?? '',
      ALICE.username,
      ALICE.name ?? '',
      ...(ALICE.groups ?? []),
      ...[tokens.accessToken, tokens.refreshToken, tokens.idToken].map((token) => token ?? ''),
    ];
    assert.ok(
      tokens.accessToken !== undefined && tokens.refreshToken !== undefined && tokens.idToken !== undefined,
    );
    assert.equal(session.email, ALICE.email);
    const dump = await redisDump();
    // The scan saw the session's record (its id names the key; the id is not a secret).
    assert.ok(
      dump.some((entry) => entry.includes(sessionId)),
      `the session's record is in Redis: ${dump.length} entries`,
    );
    for (const needle of secrets) {
      assert.ok(needle.length >= 3, 'every needle is a real string');
      const found = dump.find((entry) => entry.includes(needle));
      assert.equal(found, undefined, `Redis holds ${needle.slice(0, 12)}... in the clear`);
    }
    // Whatever starts like a JOSE token (`eyJ`) is sealed (a JWE), never a readable signed token.
    const jose = dump.flatMap((entry) => entry.match(/eyJ[\w-]*(?:\.[\w-]*)*/g) ?? []);
    assert.ok(jose.length > 0, 'the sealed record is a compact JWE');
    for (const value of jose) {
      assert.equal(value.split('.').length, 5, `not a compact JWE: ${value.slice(0, 40)}...`);
      const header = decodeProtectedHeader(value);
      assert.equal(header.enc, 'A256GCM', `not an encrypted value: ${JSON.stringify(header)}`);
    }
  });

  it('Redis hung with its connections open (SIGSTOP): the grace starts all the same, then 503 and /readyz unready; SIGCONT: the same cookie works', async () => {
    const app = `${rig.appOrigin}/hang`;
    await waitFor(async () => (await client.get(app)).status === 200, {
      what: 'the session to work before the hang',
      timeoutMs: 10_000,
    });
    assert.deepEqual(await readyz(), { status: 200, sessionStore: 'ok' });
    // The change feed's states as the session store hears them.
    const states: Array<{ kind: string; at: number }> = [];
    const unwatch = rig.portcullis.running.sessions.records.watch((change) => {
      if (change.kind === 'lost' || change.kind === 'resumed')
        states.push({ kind: change.kind, at: performance.now() });
    });

    redis.pause();
    const pausedAt = performance.now();
    try {
      // Past the grace (2 s) plus the time to notice a hang (at most 1.5 s idle): a 503, every
      // answer before it a 200. Without the liveness check the cached session serves all along.
      await waitFor(
        async () => {
          const { answer, ms } = await timed(client, app, { accept: 'application/json' });
          if (answer.status === 200) return false;
          assertOutage(answer, ms, 'json', 'the API request once the grace is over');
          return true;
        },
        { what: 'a 503 once the outage grace is over while Redis hangs', timeoutMs: 10_000, intervalMs: 100 },
      );
      const refusedMs = performance.now() - pausedAt;
      assert.equal(states[0]?.kind, 'lost', 'the hang was reported as a lost change feed');
      const lostMs = (states[0]?.at ?? 0) - pausedAt;
      assert.ok(refusedMs >= 1_000, `cached sessions worked for ${refusedMs.toFixed(0)} ms of a 2 s grace`);
      assert.ok(
        refusedMs < 6_000,
        `the cached session was refused only ${refusedMs.toFixed(0)} ms after the hang`,
      );
      const browser = await timed(client, app, { accept: 'text/html' });
      assertOutage(browser.answer, browser.ms, 'html', 'a browser request while Redis hangs');
      const unready = await readyz();
      assert.equal(unready.status, 503);
      assert.notEqual(unready.sessionStore, 'ok');

      redis.resume();
      const resumedAt = performance.now();
      await waitFor(
        async () => {
          const { answer, ms } = await timed(client, app);
          if (answer.status === 200) return true;
          assertOutage(answer, ms, 'html', 'a request while Redis recovers');
          return false;
        },
        { what: 'the same cookie to work once Redis runs again', timeoutMs: 10_000, intervalMs: 50 },
      );
      const backMs = performance.now() - resumedAt;
      assert.deepEqual(sessionCookies((await timed(client, app)).answer), []);
      await waitFor(async () => (await readyz()).status === 200, {
        what: '/readyz to be ready again',
        timeoutMs: 5_000,
      });
      // The feed proved delivery again (so the next test starts with no outage pending).
      await waitFor(async () => states.at(-1)?.kind === 'resumed', {
        what: 'the change feed to be resumed',
        timeoutMs: 5_000,
      });
      process.stderr.write(
        `redis hang (SIGSTOP): feed lost ${lostMs.toFixed(0)} ms and cached session refused ` +
          `${refusedMs.toFixed(0)} ms after the hang began ` +
          `(grace 2 s); the same cookie worked ${backMs.toFixed(0)} ms after SIGCONT\n`,
      );
    } finally {
      unwatch();
      redis.resume();
    }
  });

  it('Redis down: cached for the grace, then a bounded 503 (never a redirect or cleared cookie); back: the same cookie works', async () => {
    const app = `${rig.appOrigin}/data`;
    const publicUrl = `${rig.publicOrigin}/`;
    const anonymous = rig.client();
    assert.equal((await client.get(app)).status, 200);

    await redis.stop();
    const stoppedAt = performance.now();
    // The session this instance cached at sign-in keeps working right after the stop.
    const cached = await timed(client, app);
    assert.equal(cached.answer.status, 200, `right after the stop: ${cached.answer.body.slice(0, 200)}`);
    assert.equal((await anonymous.get(publicUrl)).status, 200);

    // Past the grace: a 503 for session-bound requests; every answer before it is a 200.
    const outageLatencies: number[] = [];
    await waitFor(
      async () => {
        const { answer, ms } = await timed(client, app, { accept: 'application/json' });
        outageLatencies.push(ms);
        if (answer.status === 200) return false;
        assertOutage(answer, ms, 'json', 'the API request once the grace is over');
        return true;
      },
      { what: 'a 503 once the outage grace is over', timeoutMs: 10_000, intervalMs: 100 },
    );
    const graceEndedMs = performance.now() - stoppedAt;
    assert.ok(
      graceEndedMs >= 1_000,
      `cached sessions worked for ${graceEndedMs.toFixed(0)} ms of a 2 s grace`,
    );

    for (let round = 0; round < 5; round++) {
      const api = await timed(client, app, { accept: 'application/json' });
      assertOutage(api.answer, api.ms, 'json', `API request ${round}`);
      const browser = await timed(client, app, { accept: 'text/html' });
      assertOutage(browser.answer, browser.ms, 'html', `browser request ${round}`);
      outageLatencies.push(api.ms, browser.ms);
      const open = await timed(anonymous, publicUrl);
      assert.equal(open.answer.status, 200, 'the public route serves while Redis is down');
    }

    // A new sign-in cannot store its session: a clear 503 page, and no session cookie anywhere.
    const newcomer = rig.client();
    const { answer: signInPage } = await rig.startSignIn(newcomer, '/new');
    let last = signInPage;
    if (signInPage.status === 302) {
      const callback = await completeLogin(
        signInPage.headers.location ?? '',
        rig.idp.user.username,
        rig.idp.user.password,
      );
      last = (await timed(newcomer, callback)).answer;
    }
    assert.equal(
      last.status,
      503,
      `the sign-in while Redis is down: ${last.status} ${last.body.slice(0, 200)}`,
    );
    assert.match(String(last.headers['content-type']), /text\/html/);
    assert.match(last.body, /temporarily unavailable/);
    assert.deepEqual(sessionCookies(last), []);
    assert.equal(rig.sessionIdOf(newcomer), undefined, 'no session cookie from a failed sign-in');
    assert.equal(rig.sessionIdOf(newcomer, `app.localhost:${rig.port}`), undefined);

    // Redis back: the same cookie works again by itself; meanwhile only 503s, never a redirect.
    await redis.start();
    const startedAt = performance.now();
    // The append-only file brought the session's record back.
    assert.ok(
      (await redisDump()).some((entry) => entry.includes(sessionId)),
      'Redis kept the session',
    );
    await waitFor(
      async () => {
        const { answer, ms } = await timed(client, app);
        if (answer.status === 200) return true;
        assertOutage(answer, ms, 'html', 'a request while Portcullis reconnects');
        return false;
      },
      { what: 'the same cookie to work once Redis is back', timeoutMs: 15_000, intervalMs: 50 },
    );
    const backMs = performance.now() - startedAt;
    assert.equal(rig.sessionIdOf(client, `app.localhost:${rig.port}`), sessionId, 'the same session');
    const worst = Math.max(...outageLatencies);
    process.stderr.write(
      `redis outage: cached sessions served ${graceEndedMs.toFixed(0)} ms after the stop (grace 2 s); ` +
        `session-bound answers while down: worst ${worst.toFixed(0)} ms of ${outageLatencies.length}; ` +
        `the same cookie worked ${backMs.toFixed(0)} ms after Redis started again\n`,
    );
  });

  it('a Portcullis restarted on the same Redis and secrets keeps the session', async () => {
    const app = `${rig.appOrigin}/after-restart`;
    assert.equal((await client.get(app)).status, 200);
    // The same listener port (free once the first Envoy is gone), so the same URLs and cookies.
    await rig.portcullis.stop();
    let restarted: TestPortcullis | undefined;
    try {
      restarted = await startPortcullis(rig.config, { listen: { host: '127.0.0.1', port: rig.port } });
      assert.equal(restarted.running.sessions.cachedCount, 0, 'a new process starts with nothing cached');
      const answer = await client.get(app);
      assert.equal(answer.status, 200, `after the restart: ${answer.status} ${answer.body.slice(0, 200)}`);
      assert.deepEqual(sessionCookies(answer), []);
    } finally {
      await restarted?.stop();
    }
  });
});
