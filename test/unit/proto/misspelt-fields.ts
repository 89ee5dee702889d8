// Checked by `npm run typecheck`, never run: each `@ts-expect-error` below marks a message the
// generated types (proto/envoy-types.d.ts via src/proto/messages.ts) must refuse. Should the types
// stop catching one (a field typed `unknown`, an index signature, an enum widened to `string`), the
// directive goes unused and typecheck fails. typed-messages.test.ts shows the same on compile's
// own source and checks the error names the field.
import { durationMs, typed, wrapped } from '../../../src/proto/codec.js';
import type { AnyOf, EnumValue, Message } from '../../../src/proto/messages.js';
import type { CompiledResource } from '../../../src/proto/compiled.js';

type Cluster = Message<'envoy.config.cluster.v3.Cluster'>;
declare const withTracing: boolean;

/** A well-formed cluster in the shape compile writes: the baseline the cases below break. */
export const cluster: Cluster = {
  name: 'c',
  type: 'EDS',
  connect_timeout: durationMs(1000),
  per_connection_buffer_limit_bytes: wrapped(32768),
  eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } },
};

export const misspeltField: Cluster = {
  name: 'c',
  // @ts-expect-error -- `connect_timout` is no field of Cluster
  connect_timout: durationMs(1000),
};

export const misspeltNestedField: Cluster = {
  name: 'c',
  // @ts-expect-error -- `eds_confg` is no field of Cluster.EdsClusterConfig
  eds_cluster_config: { eds_confg: { ads: {} } },
};

export const wrongEnumName: Cluster = {
  name: 'c',
  // @ts-expect-error -- Cluster.LbPolicy has ROUND_ROBIN, not ROUND_ROBBIN
  lb_policy: 'ROUND_ROBBIN',
};

export const wrongScalar: Cluster = {
  // @ts-expect-error -- a wrapper is `{value}`, not a bare number
  per_connection_buffer_limit_bytes: 32768,
};

// @ts-expect-error -- `stat_prefix` belongs to HttpConnectionManager, not to the Router's typed config
export const fieldOfAnotherMessage = typed('envoy.extensions.filters.http.router.v3.Router', { stat_prefix: 'x' });

const upstream: Message<'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext'> = { sni: 'a.example' };
// @ts-expect-error -- a message built as one type is not another, even where the fields agree
export const otherMessage = typed('envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext', upstream);

// @ts-expect-error -- no message has this name
export const unknownMessage = typed('envoy.extensions.filters.http.router.v3.Routr', {});

export const typedConfigOfWrongKind: Message<'envoy.config.listener.v3.Filter'> = {
  name: 'envoy.filters.network.http_connection_manager',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router',
    // @ts-expect-error -- a literal Any is checked against the message its `@type` names
    rds: { route_config_name: 'ingress' },
  },
};

/** Optional parts set by assignment are checked like the literal's own fields. */
export function assignedLater(): Message<'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager'> {
  const manager: Message<'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager'> = {
    stat_prefix: 'ingress',
  };
  // @ts-expect-error -- `tracng` is no field of HttpConnectionManager
  if (withTracing) manager.tracng = {};
  return manager;
}

export const listenerAsCluster: CompiledResource<'envoy.config.cluster.v3.Cluster'> = {
  name: 'l',
  // @ts-expect-error -- a resource of one type cannot carry another type's message
  message: { name: 'l', filter_chains: [] },
};

// @ts-expect-error -- RedirectResponseCode names, not HTTP numbers
export const redirectCode: EnumValue<'envoy.config.route.v3.RedirectAction.RedirectResponseCode'> = 301;

/** What `typed` returns names its message in `@type`, so it is assignable exactly where an Any goes. */
export const router: AnyOf<'envoy.extensions.filters.http.router.v3.Router'> = typed(
  'envoy.extensions.filters.http.router.v3.Router',
  { suppress_envoy_headers: true },
);

export const misspeltDatabrokerField: Message<'portcullis.databroker.v1.PutRequest'> = {
  type: 'session',
  id: 's1',
  // @ts-expect-error -- `ttl` is no field of the databroker's PutRequest (`ttl_ms` is)
  ttl: 5,
};
