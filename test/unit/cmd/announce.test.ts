// What the terminal says once Envoy is ready (cmd/announce.ts): one line per Envoy listener with
// the URL it is bound to, read from Envoy's admin `/listeners?format=json`, https for the
// user-facing listener when it has TLS, http for it without TLS and for the redirect listener.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { envoyListenerLines } from '../../../src/cmd/announce.js';
import type { IRListener } from '../../../src/ir/types.js';

const listener = (name: string, tls: boolean): { listener: IRListener } => ({
  listener: {
    name,
    host: '0.0.0.0',
    port: 0,
    tls: tls ? { certificates: [] } : undefined,
    useProxyProtocol: false,
    xffNumTrustedHops: 0,
    requestTimeoutMs: 0,
    idleTimeoutMs: 0,
  },
});

const ADMIN_ANSWER = JSON.stringify({
  listener_statuses: [
    { name: 'https-ingress', local_address: { socket_address: { address: '0.0.0.0', port_value: 8443 } } },
    { name: 'http-redirect', local_address: { socket_address: { address: '::', port_value: 8080 } } },
    { name: 'no-socket', local_address: { pipe: { path: '/tmp/x' } } },
  ],
});

test('one line per bound listener, with the scheme its TLS gives it', () => {
  assert.deepEqual(envoyListenerLines(ADMIN_ANSWER, listener('https-ingress', true)), [
    { name: 'https-ingress', url: 'https://0.0.0.0:8443', serves: 'routes' },
    { name: 'http-redirect', url: 'http://[::]:8080', serves: 'redirects to HTTPS' },
  ]);
  const plain = envoyListenerLines(
    JSON.stringify({
      listener_statuses: [
        {
          name: 'http-ingress',
          local_address: { socket_address: { address: '127.0.0.1', port_value: 8080 } },
        },
      ],
    }),
    listener('http-ingress', false),
  );
  assert.deepEqual(plain, [{ name: 'http-ingress', url: 'http://127.0.0.1:8080', serves: 'routes' }]);
  assert.deepEqual(envoyListenerLines('{}', undefined), []);
  assert.throws(() => envoyListenerLines('not json', undefined));
});
