// Where the client dials and which name it checks: the route host on 443 by default; a --via
// name replaces the TLS and sign-in host (pomerium-cli's --pomerium-url); a --via IP address is
// only the dial address. Plus the argument parsers and the browser opener's argv.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openerCommand } from '../../../src/cli/browser.js';
import { parseOrigin, resolveEndpoint } from '../../../src/cli/endpoint.js';
import { parseAuthority } from '../../../src/cli/run.js';
import { refusal } from '../../../src/cli/portcullis-http.js';

const trust = { insecureSkipVerify: false };

test('without --via the client dials the route host on 443 and checks its name', () => {
  const e = resolveEndpoint(new URL('https://db.example.com'), undefined, trust);
  assert.deepEqual(
    { origin: e.origin.href, dial: `${e.dialHost}:${e.dialPort}`, name: e.serverName },
    { origin: 'https://db.example.com/', dial: 'db.example.com:443', name: 'db.example.com' },
  );
});

test('a --via name is the dial address, the TLS name and the sign-in origin', () => {
  const e = resolveEndpoint(
    new URL('https://db.example.com'),
    new URL('https://proxy.example.com:8443'),
    trust,
  );
  assert.deepEqual(
    { origin: e.origin.href, dial: `${e.dialHost}:${e.dialPort}`, name: e.serverName },
    { origin: 'https://proxy.example.com:8443/', dial: 'proxy.example.com:8443', name: 'proxy.example.com' },
  );
});

test('a --via IP address is only dialled; the route host stays the TLS name and sign-in origin', () => {
  const v4 = resolveEndpoint(new URL('https://db.example.com'), new URL('https://10.0.0.7:8443'), trust);
  assert.deepEqual(
    { origin: v4.origin.href, dial: `${v4.dialHost}:${v4.dialPort}`, name: v4.serverName },
    { origin: 'https://db.example.com/', dial: '10.0.0.7:8443', name: 'db.example.com' },
  );
  const v6 = resolveEndpoint(new URL('https://db.example.com'), new URL('https://[::1]'), trust);
  assert.equal(v6.dialHost, '::1');
  assert.equal(v6.dialPort, 443);
  assert.equal(v6.serverName, 'db.example.com');
});

test('origins must be https://host[:port]', () => {
  assert.equal(parseOrigin('https://App.example.com:8443/', '--url').href, 'https://app.example.com:8443/');
  assert.throws(() => parseOrigin('http://app.example.com', '--url'), /--url must be an https/);
  assert.throws(
    () => parseOrigin('https://app.example.com/path', '--via'),
    /--via takes only https:\/\/host\[:port\]/,
  );
  assert.throws(() => parseOrigin('https://u:p@app.example.com', '--via'), /--via must be/);
  assert.throws(() => parseOrigin('not a url', '--url'), /--url must be an https:\/\/ URL/);
});

test('the target is host:port', () => {
  assert.deepEqual(parseAuthority('db.example.com:5432'), {
    host: 'db.example.com:5432',
    hostname: 'db.example.com',
  });
  assert.deepEqual(parseAuthority('[2001:db8::1]:22'), { host: '[2001:db8::1]:22', hostname: '2001:db8::1' });
  assert.throws(() => parseAuthority('db.example.com'), /must be host:port/);
  assert.throws(() => parseAuthority('db.example.com:5432/x'), /must be host:port/);
  assert.throws(() => parseAuthority('u@db.example.com:5432'), /must be host:port/);
});

test('refusals are one line with the route, the status and the JSON reason', () => {
  const body = Buffer.from(JSON.stringify({ error: 'Forbidden', reason: 'not\nallowed', request_id: 'abc' }));
  assert.equal(
    refusal('db:5432', 403, 'Forbidden', body),
    'access to db:5432 was denied (403): not allowed (request id abc)',
  );
  assert.equal(
    refusal('db:5432', 502, 'Bad Gateway', Buffer.from('upstream connect error')),
    'the target db:5432 is unreachable (502)',
  );
  assert.equal(
    refusal('db:5432', 418, "I'm a teapot", Buffer.alloc(0)),
    "Portcullis refused the tunnel to db:5432 (418 I'm a teapot)",
  );
});

test('the browser opener: $BROWSER, else the platform command; the URL is one argv entry', () => {
  assert.deepEqual(openerCommand({ BROWSER: '/usr/bin/firefox' }, 'linux'), ['/usr/bin/firefox']);
  assert.deepEqual(openerCommand({}, 'linux'), ['xdg-open']);
  assert.deepEqual(openerCommand({}, 'darwin'), ['open']);
  assert.deepEqual(openerCommand({}, 'win32'), ['rundll32', 'url.dll,FileProtocolHandler']);
});
