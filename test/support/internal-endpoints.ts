import type { IRInternal } from '../../src/ir/types.js';

/**
 * Where Envoy reaches Portcullis's own services in compile-only tests (authorization on, nothing
 * listening): the authorize gRPC port, its 10 s timeout, empty key sets, the HTTP endpoints' port.
 */
export const TEST_INTERNAL: IRInternal = {
  authorize: { host: '127.0.0.1', port: 5443 },
  authorizeTimeoutMs: 10_000,
  jwksJson: '{"keys":[]}',
  decisionJwksJson: '{"keys":[]}',
  http: { host: '127.0.0.1', port: 5080 },
};
