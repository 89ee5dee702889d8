import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { ADS_SERVICE } from '../../../../src/xds/server/grpc-service.js';
import { encodeSotwRequest } from '../../../../src/xds/server/messages.js';
import type { DecodedSotwResponse } from '../../../../src/xds/server/messages.js';
import { connectAds } from '../../../support/ads-client.js';
import { TEST_GRPC_CREDENTIAL, credentialClientOptions } from '../../../support/grpc-credential.js';
import { CDS, baseSpec, buildSnapshot, cluster, waitFor, withServer } from './helpers.js';

const SECRET = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret';

describe('ADS robustness', () => {
  for (const mode of ['sotw', 'delta'] as const) {
    it(`${mode}: ignores a type URL it does not serve, with a debug log`, () =>
      withServer(async ({ server, connect, logger }) => {
        server.source.publish(buildSnapshot(baseSpec()));
        const client = connect(mode);
        client.subscribe(SECRET, ['tls']);
        client.subscribe(CDS);
        const response = await client.next();
        assert.equal(response.typeUrl, CDS, 'the stream keeps working');
        assert.equal(server.ads.stats().unknownTypeRequests, 1);
        assert.ok(logger.records.some((r) => r.level === 'debug' && JSON.stringify(r).includes(SECRET)));
      }));

    it(`${mode}: survives a client that cancels, and keeps serving others`, () =>
      withServer(async ({ server, connect, logger }) => {
        server.source.publish(buildSnapshot(baseSpec()));
        const leaving = connect(mode, 'leaving');
        const staying = connect(mode, 'staying');
        leaving.subscribe(CDS);
        staying.subscribe(CDS);
        await leaving.next();
        staying.ack(await staying.next());
        leaving.close();
        await waitFor(() => server.ads.stats().streamsOpen === 1, 'the cancelled stream to be dropped');

        server.source.publish(buildSnapshot({ ...baseSpec(), clusters: [cluster('c1'), cluster('c9')] }));
        const update = await staying.next();
        assert.equal(update.typeUrl, CDS);
        assert.equal(
          logger.records.filter((r) => r.level === 'error').length,
          0,
          JSON.stringify(logger.records.filter((r) => r.level === 'error')),
        );
      }));

    it(`${mode}: close() ends streams with OK and refuses new ones with UNAVAILABLE`, () =>
      withServer(async ({ server, connect }) => {
        server.source.publish(buildSnapshot(baseSpec()));
        const client = connect(mode);
        client.subscribe(CDS);
        await client.next();
        server.ads.close();
        await assert.rejects(client.next(), /ended by the server/);
        await waitFor(() => server.ads.stats().streamsOpen === 0, 'no open stream');

        const late = connect(mode, 'late');
        late.subscribe(CDS);
        await assert.rejects(late.next(), (err: { code?: number }) => err.code === grpc.status.UNAVAILABLE);
      }));
  }

  it('logs a malformed request and keeps the stream', () =>
    withServer(async ({ server, logger }) => {
      server.source.publish(buildSnapshot(baseSpec()));
      const client = new grpc.Client(
        server.address,
        grpc.credentials.createInsecure(),
        credentialClientOptions(),
      );
      const method = ADS_SERVICE.StreamAggregatedResources;
      const call = client.makeBidiStreamRequest<Buffer, DecodedSotwResponse>(
        method.path,
        (bytes) => bytes,
        method.responseDeserialize,
      );
      try {
        const received = new Promise<DecodedSotwResponse>((resolve, reject) => {
          call.once('data', resolve);
          call.once('error', reject);
        });
        // Field 2 (node) holds three bytes that are not a Node message: protobufjs cannot decode it.
        call.write(Buffer.from([0x12, 0x03, 0xff, 0xff, 0xff]));
        // A well-formed message without type_url is malformed for ADS.
        call.write(encodeSotwRequest({ type_url: '', version_info: 'x' }));
        call.write(encodeSotwRequest({ type_url: CDS, node: { id: 'raw' } }));
        const response = await received;
        assert.equal(response.type_url, CDS);
        assert.equal(server.ads.stats().malformedRequests, 2);
        assert.ok(logger.records.some((r) => r.level === 'warn' && (r.msg ?? '').includes('malformed')));
      } finally {
        call.cancel();
        client.close();
      }
    }));

  it('counts streams and requests in stats()', () =>
    withServer(async ({ server }) => {
      const client = connectAds(server.address, {
        mode: 'sotw',
        nodeId: 'counted',
        credential: TEST_GRPC_CREDENTIAL,
      });
      try {
        client.subscribe(CDS);
        await waitFor(() => server.ads.stats().requests === 1, 'the request');
        const stats = server.ads.stats();
        assert.equal(stats.streamsOpen, 1);
        assert.equal(stats.streamsTotal, 1);
        assert.equal(stats.lastNack, undefined);
      } finally {
        client.close();
      }
    }));
});
