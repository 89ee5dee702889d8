import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { deriveGrpcCredential } from '../../../../src/contract/grpc-credential.js';
import { connectAds } from '../../../support/ads-client.js';
import { TEST_GRPC_CREDENTIAL } from '../../../support/grpc-credential.js';
import { CDS, LDS, baseSpec, buildSnapshot, withServer } from './helpers.js';

// The listener and cluster resources carry TLS private keys: only the Envoy that presents the gRPC
// credential may open an ADS stream. Anything else is refused at the stream's start.
const WRONG = deriveGrpcCredential(Buffer.alloc(32, 0x01));

describe('ADS authentication', () => {
  for (const mode of ['sotw', 'delta'] as const) {
    for (const [what, credential] of [
      ['no credential', undefined],
      ['a wrong credential', WRONG],
      ['an empty credential', ''],
    ] as const) {
      it(`${mode}: a stream with ${what} is refused UNAUTHENTICATED and gets no resource`, () =>
        withServer(async ({ server, logger }) => {
          server.source.publish(buildSnapshot(baseSpec()));
          const client = connectAds(server.address, {
            mode,
            nodeId: 'intruder',
            ...(credential === undefined ? {} : { credential }),
          });
          try {
            client.subscribe(CDS);
            client.subscribe(LDS);
            await assert.rejects(
              client.next(),
              (err: { code?: number }) => err.code === grpc.status.UNAUTHENTICATED,
            );
            assert.equal(client.received.length, 0, 'no response reached the client');
            const stats = server.ads.stats();
            assert.equal(stats.unauthenticatedStreams, 1);
            assert.equal(stats.streamsTotal, 0, 'the stream was never opened');
            assert.equal(stats.requests, 0, 'no request was read');
            const refusal = logger.records.find((r) => (r.msg ?? '').includes('UNAUTHENTICATED'));
            assert.ok(refusal, 'the refusal is logged');
            const logged = JSON.stringify(logger.records);
            assert.ok(!logged.includes(WRONG) && !logged.includes(TEST_GRPC_CREDENTIAL), 'no token logged');
          } finally {
            client.close();
          }
        }));
    }

    it(`${mode}: a stream with the right credential gets its resources`, () =>
      withServer(async ({ server }) => {
        server.source.publish(buildSnapshot(baseSpec()));
        const client = connectAds(server.address, {
          mode,
          nodeId: 'envoy',
          credential: TEST_GRPC_CREDENTIAL,
        });
        try {
          client.subscribe(CDS);
          const response = await client.next();
          assert.equal(response.typeUrl, CDS);
          assert.deepEqual(response.resources.map((r) => r.name).sort(), ['c1', 'c2']);
          assert.equal(server.ads.stats().unauthenticatedStreams, 0);
        } finally {
          client.close();
        }
      }));
  }
});
