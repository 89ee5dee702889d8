// Split services (issue 25): which service URLs a process must set, must leave unset, and what
// form they take (an origin; https:// always with tls_derive, else only with certificate_authority;
// http:// off loopback only with grpc_insecure); `tls_derive` names; `databroker_outage_grace`;
// the Redis URL schemes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatProblem } from '../../../src/shared/errors.js';
import { assertProblem, base, CERT_PEM, parse, problems, SECRET_32, valid } from './helpers.js';

/** Secrets every split process needs, so only the URL rules speak. */
const SPLIT = { shared_secret: SECRET_32, cookie_secret: SECRET_32 };

/** Loopback URLs of the three services, valid without TLS. */
const LOOPBACK = {
  authorize_service_url: 'http://127.0.0.1:5443',
  databroker_service_url: 'http://127.0.0.1:5453',
  authenticate_internal_service_url: 'http://127.0.0.1:5444',
};

/** The problems of `base(extra)` as `path: message` lines. */
function lines(extra: Record<string, unknown>, env: Record<string, string> = {}): string[] {
  return parse(base(extra), env).problems.map(formatProblem);
}

/** The paths with a problem, each followed by its message up to the first colon. */
function heads(extra: Record<string, unknown>, env: Record<string, string> = {}): string[] {
  return parse(base(extra), env).problems.map(
    (problem) => `${problem.path}: ${problem.message.replace(/:.*/s, '')}`,
  );
}

/** `services` with only the URLs a process running them needs (the others would be refused). */
function needed(services: string): Record<string, string> {
  const runs = (name: string): boolean => services.split(',').includes(name);
  return {
    ...(runs('proxy') && !runs('authorize') ? { authorize_service_url: LOOPBACK.authorize_service_url } : {}),
    ...((runs('authenticate') || runs('authorize')) && !runs('databroker')
      ? { databroker_service_url: LOOPBACK.databroker_service_url }
      : {}),
    ...(runs('proxy') && !runs('authenticate')
      ? { authenticate_internal_service_url: LOOPBACK.authenticate_internal_service_url }
      : {}),
  };
}

test('each service a process needs but does not run must have its URL', () => {
  assert.deepEqual(lines({ ...SPLIT, services: 'proxy' }), [
    "authorize_service_url: is required: this process runs proxy but not authorize (services: proxy), so it must say where this proxy's Envoy sends ext_authz Checks",
    "authenticate_internal_service_url: is required: this process runs proxy but not authenticate (services: proxy), so it must say where this proxy's Envoy reaches sign-in and the /.portcullis/ endpoints",
  ]);
  assert.deepEqual(heads({ ...SPLIT, services: 'authenticate,authorize,proxy' }), [
    'databroker_service_url: is required',
  ]);
  assert.match(
    lines({ ...SPLIT, services: 'authenticate,authorize,proxy' })[0] ?? '',
    /this process runs authenticate and authorize but not databroker \(services: authenticate,authorize,proxy\)/,
  );
  assert.deepEqual(heads({ ...SPLIT, services: 'authenticate' }), ['databroker_service_url: is required']);
  assert.deepEqual(heads({ ...SPLIT, services: 'authorize' }), ['databroker_service_url: is required']);
  // A databroker alone, or authorize with it, reaches nothing elsewhere.
  assert.deepEqual(lines({ ...SPLIT, services: 'databroker' }), []);
  assert.deepEqual(lines({ ...SPLIT, services: 'authorize,databroker' }), []);
});

test('every split combination validates with exactly the URLs it needs', () => {
  const names = ['authenticate', 'authorize', 'proxy', 'databroker'];
  for (let mask = 1; mask < 15; mask += 1) {
    const services = names.filter((_, index) => (mask & (1 << index)) !== 0).join(',');
    const config = valid(base({ ...SPLIT, services, ...needed(services) }));
    assert.deepEqual(config.services, services.split(','), services);
  }
});

test('a URL that failed to parse gets its own message, not "is required" on top', () => {
  assert.deepEqual(heads({ ...SPLIT, services: 'authorize', databroker_service_url: 'not a url' }), [
    'databroker_service_url: "not a url" is not a URL with a scheme and host (for example https',
  ]);
});

test('a service running in this process must not have its URL set', () => {
  for (const key of ['authorize_service_url', 'databroker_service_url'] as const) {
    const service = key.replace(/_service_url$/, '');
    assert.deepEqual(lines({ [key]: LOOPBACK[key] }), [
      `${key}: must not be set in all-in-one mode (services: all): ${service} runs in this process, and another address would only make requests fail later; remove ${key}`,
    ]);
  }
  assert.deepEqual(
    heads({
      ...SPLIT,
      services: 'authorize,databroker',
      databroker_service_url: LOOPBACK.databroker_service_url,
    }),
    ['databroker_service_url: must be unset with services'],
  );
  assert.match(
    lines({
      ...SPLIT,
      services: 'authorize,databroker',
      databroker_service_url: LOOPBACK.databroker_service_url,
    })[0] ?? '',
    /must be unset with services: authorize,databroker: databroker runs in this process/,
  );
  assert.deepEqual(
    heads({
      ...SPLIT,
      services: 'proxy,authorize',
      ...needed('proxy,authorize'),
      authorize_service_url: LOOPBACK.authorize_service_url,
    }),
    ['authorize_service_url: must be unset with services'],
  );
  // From the environment, the variable is named.
  assert.deepEqual(heads({}, { DATABROKER_SERVICE_URL: LOOPBACK.databroker_service_url }), [
    'DATABROKER_SERVICE_URL: must not be set in all-in-one mode (services',
  ]);
});

test('authenticate_internal_service_url may be set wherever authenticate runs (it also tells a sidecar Envoy)', () => {
  const url = LOOPBACK.authenticate_internal_service_url;
  assert.equal(
    valid(base({ authenticate_internal_service_url: url })).authenticate_internal_service_url?.href,
    `${url}/`,
  );
  valid(
    base({
      ...SPLIT,
      services: 'authenticate,proxy',
      ...needed('authenticate,proxy'),
      authenticate_internal_service_url: url,
    }),
  );
});

test('a service URL is an origin: no path, query, fragment or credentials', () => {
  const proxy = { ...SPLIT, services: 'proxy', ...needed('proxy') };
  for (const url of ['http://127.0.0.1:5443/authz', 'http://127.0.0.1:5443?x=1', 'http://127.0.0.1:5443#x']) {
    assert.deepEqual(
      lines({ ...proxy, authorize_service_url: url }),
      ['authorize_service_url: must be an origin (scheme, host and port only): http://127.0.0.1:5443'],
      url,
    );
  }
  assert.deepEqual(lines({ ...proxy, authorize_service_url: 'http://u:p@127.0.0.1:5443' }), [
    'authorize_service_url: must not carry credentials',
  ]);
  assert.deepEqual(
    lines({ ...proxy, authorize_service_url: 'http://127.0.0.1:5443/' }),
    [],
    'a bare / is an origin',
  );
});

test('https:// always with tls_derive, and otherwise only with certificate_authority', () => {
  const proxy = { ...SPLIT, services: 'proxy', ...needed('proxy') };
  assert.deepEqual(lines({ ...proxy, authorize_service_url: 'https://authz:5443' }), [
    'authorize_service_url: https:// needs tls_derive or certificate_authority (the CA that signed the certificate served at this URL); set one, or use http:// on a private network',
  ]);
  const derived = {
    ...SPLIT,
    tls_derive: 'portcullis.internal',
    services: 'proxy',
    authorize_service_url: 'https://authz:5443',
    authenticate_internal_service_url: 'https://authn:5444',
  };
  assert.deepEqual(lines(derived), [], 'https off loopback is fine with the derived TLS');
  assert.deepEqual(lines({ ...derived, authorize_service_url: 'http://127.0.0.1:5443' }), [
    'authorize_service_url: must be https:// with tls_derive set (internal connections use the derived TLS): https://127.0.0.1:5443',
  ]);
  assert.deepEqual(
    lines({ ...derived, grpc_insecure: true, authenticate_internal_service_url: 'http://authn:5444' }),
    [
      'authenticate_internal_service_url: must be https:// with tls_derive set (internal connections use the derived TLS): https://authn:5444',
    ],
  );
});

test('certificate_authority without tls_derive: https:// URLs with DNS names, any mix with http://', () => {
  const withCa = {
    ...SPLIT,
    services: 'proxy',
    certificate_authority: CERT_PEM,
    authorize_service_url: 'https://authz.internal:5443',
    authenticate_internal_service_url: 'https://authn:5444',
  };
  assert.deepEqual(lines(withCa), [], 'https off loopback is fine with a CA of your own');
  assert.deepEqual(lines({ ...withCa, authenticate_internal_service_url: 'http://127.0.0.1:5444' }), []);
  assert.deepEqual(lines({ ...withCa, authorize_service_url: 'https://10.0.0.5:5443' }), [
    "authorize_service_url: 10.0.0.5 is an IP address: with certificate_authority the service's certificate is checked against the URL's host, which must be a DNS name",
  ]);
  assert.deepEqual(
    lines({
      ...SPLIT,
      services: 'authorize',
      certificate_authority: CERT_PEM,
      databroker_service_url: 'https://[fd00::1]:5453',
    }),
    [
      "databroker_service_url: [fd00::1] is an IP address: with certificate_authority the service's certificate is checked against the URL's host, which must be a DNS name",
    ],
  );
  assert.deepEqual(
    heads({ ...withCa, certificate_authority: 'not a pem' }).map((line) => line.split(' ')[0]),
    ['certificate_authority:'],
    'a bad CA gets its own message, not "https:// needs" on top',
  );
  const derived = parse(base({ ...withCa, tls_derive: 'portcullis.internal' }));
  assert.deepEqual(derived.problems, []);
  assert.deepEqual(derived.warnings.map(formatProblem), [
    'certificate_authority: is ignored with tls_derive set: internal connections trust only the CA derived from shared_secret; unset certificate_authority or tls_derive',
  ]);
});

test('http:// off loopback needs grpc_insecure: true', () => {
  const authorize = { ...SPLIT, services: 'authorize' };
  for (const host of ['127.0.0.1', '127.9.9.9', '[::1]', 'localhost']) {
    assert.deepEqual(lines({ ...authorize, databroker_service_url: `http://${host}:5443` }), [], host);
  }
  for (const host of ['10.0.0.5', 'databroker', '[fd00::1]', '0.0.0.0']) {
    assert.deepEqual(
      lines({ ...authorize, databroker_service_url: `http://${host}:5443` }),
      [
        `databroker_service_url: http://${host}:5443 is not loopback and would be reached without TLS: set tls_derive, use https:// with certificate_authority, or grpc_insecure: true on a private network`,
      ],
      host,
    );
    assert.deepEqual(
      lines({ ...authorize, grpc_insecure: true, databroker_service_url: `http://${host}:5443` }),
      [],
    );
  }
});

test('tls_derive takes a DNS name, lower-cased; not an IP, not a malformed name', () => {
  for (const [name, expected] of [
    ['portcullis.internal', 'portcullis.internal'],
    ['localhost', 'localhost'],
    ['Mesh.Example.COM', 'mesh.example.com'],
    ['a-b.c1.example', 'a-b.c1.example'],
    [`${'a'.repeat(63)}.example`, `${'a'.repeat(63)}.example`],
  ]) {
    assert.equal(valid(base({ ...SPLIT, tls_derive: name })).tls_derive, expected, name);
  }
  for (const name of [
    'x y',
    '10.0.0.1',
    '::1',
    '[::1]',
    '1.2.3.4.5',
    'a.123',
    '-a.b',
    'a-.b',
    'a..b',
    'a_b.c',
    `${'a'.repeat(64)}.example`,
  ]) {
    const found = lines({ ...SPLIT, tls_derive: name });
    assert.equal(found.length, 1, `${name}: ${found.join('; ')}`);
    assert.match(found[0] ?? '', /^tls_derive: ".*" is not a DNS name/, name);
  }
  assert.equal(valid(base()).tls_derive, undefined, 'unset by default');
});

test('databroker_outage_grace defaults to one minute; 0s turns it off', () => {
  assert.equal(valid(base()).databroker_outage_grace_ms, 60_000);
  assert.equal(valid(base({ databroker_outage_grace: '0s' })).databroker_outage_grace_ms, 0);
  assert.equal(valid(base({ databroker_outage_grace: '2m30s' })).databroker_outage_grace_ms, 150_000);
  assert.deepEqual(
    heads({ databroker_outage_grace: 'soon' }).map((line) => line.split(':')[0]),
    ['databroker_outage_grace'],
  );
});

test('Redis connection strings: plain, TLS, Sentinel and Cluster schemes are accepted', () => {
  for (const url of [
    'redis://r:6379',
    'rediss://user:pass@r:6380/2',
    'redis-sentinel://s:26379/mymaster',
    'redis+sentinel://s:26379/mymaster',
    'rediss+cluster://c:7000',
  ]) {
    const config = valid(
      base({ databroker_storage_type: 'redis', databroker_storage_connection_string: url }),
    );
    assert.equal(config.databroker_storage_connection_string?.reveal(), url);
  }
});

test('Redis connection strings: multi-host Sentinel and Cluster (the documented form) and every backend scheme', () => {
  for (const url of [
    'redis+sentinel://s1:26379,s2:26379/mymaster',
    'redis+cluster://c1:7000,c2:7001',
    'rediss+sentinel://s:26379/mymaster',
    'redis-cluster://c:7000',
  ]) {
    valid(base({ databroker_storage_type: 'redis', databroker_storage_connection_string: url }));
  }
});

test('a bad Redis connection string says why, never showing the value', () => {
  for (const [url, why] of [
    ['http://r:6379', 'unknown scheme'],
    ['redis+sentinel://s:26379', 'master name'],
    ['redis://:s3cret-pw@', 'no host'],
    ['redis://:s3cret-pw@r:6379/x', 'db must be a number'],
  ] as const) {
    const list = problems(
      base({ databroker_storage_type: 'redis', databroker_storage_connection_string: url }),
    );
    assertProblem(list, 'databroker_storage_connection_string', why);
    assert.ok(!JSON.stringify(list).includes('s3cret-pw'), `the password leaked: ${JSON.stringify(list)}`);
  }
});
