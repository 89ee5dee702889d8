import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../shared/logger.js';
import { MakeBeforeBreak } from './publish/make-before-break.js';
import { AdsServer } from './server/ads-server.js';
import type { SnapshotStore } from './snapshot/snapshot-store.js';
import type { Snapshot } from './snapshot/types.js';

/** What the xDS service (the proxy's control plane) needs from the process that runs it. */
export interface XdsDeps {
  /** Where the snapshots go; the ADS server serves from it. */
  readonly store: SnapshotStore;
  readonly logger: Logger;
  /** The process's gRPC server, where ADS is registered. */
  readonly grpcServer: grpc.Server;
  /** The credential Envoy presents to ADS. */
  readonly envoyCredential: string;
  /** Called each time every Envoy holds the latest build's routes (see MakeBeforeBreak). */
  readonly onSettled: () => void;
  /** Hands `publish` every accepted build's snapshot (the current one at once), in subscription order. */
  readonly subscribe: (name: string, publish: (snapshot: Snapshot) => void) => void;
}

/** The started xDS service. */
export interface StartedXds {
  readonly ads: AdsServer;
  readonly publisher: MakeBeforeBreak;
}

/**
 * Starts the xDS service: every accepted build's snapshot is published make-before-break (clusters
 * a build drops stay until every Envoy has ACKed the routes that no longer use them), and ADS is
 * served on the process's gRPC server, its stream events feeding the publisher.
 */
export function startXds(deps: XdsDeps): StartedXds {
  const publisher = new MakeBeforeBreak({
    store: deps.store,
    logger: deps.logger,
    onSettled: deps.onSettled,
  });
  const ads = new AdsServer({ source: deps.store, logger: deps.logger, credential: deps.envoyCredential });
  ads.onEvent((event) => publisher.observe(event));
  deps.subscribe('xds', (snapshot) => publisher.publish(snapshot));
  ads.register(deps.grpcServer);
  return { ads, publisher };
}
