import { isLoopbackIp } from '../shared/loopback.js';
import { XDS_CLUSTER } from '../contract/names.js';
import { grpcCredentialSecret, grpcCredentialUpstreamFilters } from '../contract/grpc-credential.js';
import {
  internalUpstreamTlsSocket,
  type InternalTlsPeer,
  type InternalTlsPeerFile,
} from '../contract/internal-tls.js';
import { isIP } from 'node:net';
import { stringify } from 'yaml';
import { PortcullisError } from '../shared/errors.js';
import { RE2_MAX_PROGRAM_SIZE } from '../shared/re2.js';

/** ADS flavours Envoy can speak: incremental (delta) or state-of-the-world. */
export const ADS_API_TYPES = ['DELTA_GRPC', 'GRPC'] as const;
export type AdsApiType = (typeof ADS_API_TYPES)[number];

/** Default admin port, Envoy's conventional one. Tests pass 0 and read the real port back. */
export const DEFAULT_ADMIN_PORT = 9901;

/** Default heap ceiling for the overload manager: 1 GiB. */
export const DEFAULT_MAX_HEAP_BYTES = 1024 * 1024 * 1024;

/** Default global cap on downstream connections (same figure Pomerium ships). */
export const DEFAULT_MAX_DOWNSTREAM_CONNECTIONS = 50_000;

/**
 * The credential written into a bootstrap generated for an Envoy that Portcullis does not start
 * (envoy/sidecar.yaml): the operator replaces it with `portcullis grpc-credential --config <file>`
 * before starting Envoy (envoy/README.md). Left as is, Portcullis refuses the stream.
 */
export const SIDECAR_CREDENTIAL_PLACEHOLDER = 'PORTCULLIS_GRPC_CREDENTIAL';

/** Inputs to `buildBootstrap`. Only `ads` is required; everything else has a safe default. */
export interface BootstrapOptions {
  /** Envoy node id; the ADS server keys snapshots by it. Default `portcullis`. */
  readonly nodeId?: string;
  /** Envoy node cluster. Default `portcullis`. */
  readonly nodeCluster?: string;
  /**
   * Where Portcullis's ADS gRPC server listens (an IP gives a STATIC cluster, a host name
   * STRICT_DNS), and the credential Envoy presents on the ADS stream and each Check
   * (`contract/grpc-credential.ts`: a static secret the clusters to Portcullis inject, which the
   * admin API shows redacted; Portcullis refuses a stream without it).
   */
  readonly ads: {
    readonly address: string;
    readonly port: number;
    readonly credential: string;
    /**
     * `tls_derive`: dial ADS over TLS trusting only the derived CA and checking its certificate
     * names `serverName` (contract/internal-tls.ts); the CA inline, or in a file Envoy reads
     * (`caFile`: envoy/sidecar.yaml, written before the secret is known). Unset: plaintext HTTP/2.
     */
    readonly tls?: InternalTlsPeer | InternalTlsPeerFile;
  };
  /** Delta (default) or state-of-the-world ADS. */
  readonly adsApiType?: AdsApiType;
  /** Admin listener; must be loopback. Default 127.0.0.1:9901; port 0 lets Envoy pick. */
  readonly admin?: { readonly address?: string; readonly port?: number };
  /** Heap size the fixed_heap monitor measures pressure against. Default 1 GiB. */
  readonly maxHeapSizeBytes?: number;
  /**
   * Global cap on open downstream connections. Default 50000. Enforced by the
   * `envoy.resource_monitors.global_downstream_max_connections` monitor: Envoy 1.40 deprecates
   * the runtime key `overload.global_downstream_max_connections` and warns that it sees no limit.
   */
  readonly maxDownstreamConnections?: number;
  /**
   * How long Envoy waits for the first CDS/LDS answer before it stops waiting and goes LIVE
   * with what it has, e.g. `'15s'` (Envoy's default when unset).
   */
  readonly initialFetchTimeout?: string;
}

/** An Envoy v3 Bootstrap in proto-JSON form (snake_case keys), ready to serialise. */
export type Bootstrap = Record<string, unknown>;

/**
 * Builds the bootstrap for an Envoy driven entirely by Portcullis over ADS: a loopback admin,
 * LDS and CDS through one ADS stream that presents the gRPC credential (a static secret, never
 * shown by the admin API), a single static cluster to the control plane, runtime
 * limits and an overload manager so defaults are not DoS-unsafe (security-threats.md §0.1).
 * Stats are flushed when the admin endpoint is read, not every 5 s: there are no stats sinks to
 * flush to, and at 10,000 routes (a few hundred thousand stats) the periodic flush held Envoy's main
 * thread, where xDS updates are applied, for hundreds of milliseconds.
 * Pure: same options, same object. Throws `ENVOY_BOOTSTRAP_INVALID` on an unsafe or impossible
 * option, because a bad bootstrap only shows up later as an Envoy that will not start.
 */
export function buildBootstrap(options: BootstrapOptions): Bootstrap {
  const adminAddress = options.admin?.address ?? '127.0.0.1';
  const adminPort = options.admin?.port ?? DEFAULT_ADMIN_PORT;
  const apiType = options.adsApiType ?? 'DELTA_GRPC';
  checkOptions(options, adminAddress, adminPort, apiType);
  const configSource = (): Record<string, unknown> => ({
    ads: {},
    ...(options.initialFetchTimeout === undefined
      ? {}
      : { initial_fetch_timeout: options.initialFetchTimeout }),
    resource_api_version: 'V3',
  });
  return {
    node: { id: options.nodeId ?? 'portcullis', cluster: options.nodeCluster ?? 'portcullis' },
    admin: { address: socketAddress(adminAddress, adminPort) },
    dynamic_resources: {
      ads_config: {
        api_type: apiType,
        transport_api_version: 'V3',
        grpc_services: [{ envoy_grpc: { cluster_name: XDS_CLUSTER } }],
        set_node_on_first_message_only: true,
      },
      lds_config: configSource(),
      cds_config: configSource(),
    },
    static_resources: {
      clusters: [xdsCluster(options.ads)],
      secrets: [grpcCredentialSecret(options.ads.credential)],
    },
    layered_runtime: runtimeLayers(),
    stats_flush_on_admin: true,
    overload_manager: overloadManager(
      options.maxHeapSizeBytes ?? DEFAULT_MAX_HEAP_BYTES,
      options.maxDownstreamConnections ?? DEFAULT_MAX_DOWNSTREAM_CONNECTIONS,
    ),
  };
}

/** Serialises a bootstrap as YAML (for the sidecar file and for humans reading a dump). */
export function bootstrapToYaml(bootstrap: Bootstrap): string {
  // Single quotes match the repo's prettier config, so a regenerated file passes `npm run lint`.
  return stringify(bootstrap, { lineWidth: 0, aliasDuplicateObjects: false, singleQuote: true });
}

function checkOptions(
  options: BootstrapOptions,
  adminAddress: string,
  adminPort: number,
  apiType: string,
): void {
  const problems: string[] = [];
  if (!isLoopbackIp(adminAddress)) {
    problems.push(
      `admin.address ${adminAddress} is not a loopback IP; the admin interface must never be routable`,
    );
  }
  if (!validPort(adminPort, true)) problems.push(`admin.port ${adminPort} is not a port number`);
  if (!validPort(options.ads.port, false)) problems.push(`ads.port ${options.ads.port} is not a port number`);
  if (options.ads.address === '') problems.push('ads.address is empty');
  const tls = options.ads.tls;
  const hasCa = (peer: InternalTlsPeer | InternalTlsPeerFile): boolean =>
    'caFile' in peer ? peer.caFile !== '' : peer.caPem.includes('-----BEGIN CERTIFICATE-----');
  if (tls !== undefined && (tls.serverName === '' || !hasCa(tls))) {
    problems.push('ads.tls needs a server name and a PEM CA certificate (or the path of one)');
  }
  // A bearer value is one header token: no whitespace or control characters (RFC 6750 section 2.1).
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(options.ads.credential)) {
    problems.push('ads.credential is empty or not a bearer token');
  }
  if (!(ADS_API_TYPES as readonly string[]).includes(apiType)) {
    problems.push(`adsApiType ${apiType} is not one of ${ADS_API_TYPES.join(', ')}`);
  }
  const maxConnections = options.maxDownstreamConnections;
  if (maxConnections !== undefined && !(Number.isSafeInteger(maxConnections) && maxConnections > 0)) {
    problems.push(`maxDownstreamConnections ${maxConnections} must be a positive integer`);
  }
  const heap = options.maxHeapSizeBytes;
  if (heap !== undefined && !(Number.isSafeInteger(heap) && heap > 0)) {
    problems.push(`maxHeapSizeBytes ${heap} must be a positive integer`);
  }
  if (problems.length > 0) {
    throw new PortcullisError(
      'ENVOY_BOOTSTRAP_INVALID',
      `invalid Envoy bootstrap options: ${problems.join('; ')}`,
    );
  }
}

function validPort(port: number, allowZero: boolean): boolean {
  return Number.isInteger(port) && port <= 65535 && (allowZero ? port >= 0 : port > 0);
}

function socketAddress(address: string, port: number): Record<string, unknown> {
  return { socket_address: { address, port_value: port } };
}

function xdsCluster(ads: BootstrapOptions['ads']): Record<string, unknown> {
  const { address, port, tls } = ads;
  return {
    name: XDS_CLUSTER,
    // STATIC needs an IP; a compose service name such as `portcullis` needs DNS.
    type: isIP(address) === 0 ? 'STRICT_DNS' : 'STATIC',
    connect_timeout: '5s',
    load_assignment: {
      cluster_name: XDS_CLUSTER,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(address, port) } }] }],
    },
    typed_extension_protocol_options: {
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
        '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
        explicit_http_config: {
          http2_protocol_options: { connection_keepalive: { interval: '30s', timeout: '5s' } },
        },
        http_filters: grpcCredentialUpstreamFilters(),
      },
    },
    ...(tls === undefined ? {} : { transport_socket: internalUpstreamTlsSocket(tls) }),
  };
}

function runtimeLayers(): Record<string, unknown> {
  return {
    layers: [
      {
        name: 'static-defaults',
        static_layer: {
          // Bound regex cost: route regexes come from configuration, so cap RE2 program size at the
          // bound `validate` checks (shared/re2.ts), so a pattern validate accepts is never NACKed.
          're2.max_program_size.error_level': RE2_MAX_PROGRAM_SIZE,
          're2.max_program_size.warn_level': 1024,
        },
      },
    ],
  };
}

function overloadManager(maxHeapBytes: number, maxConnections: number): Record<string, unknown> {
  const heapTrigger = (value: number): Record<string, unknown>[] => [
    { name: 'envoy.resource_monitors.fixed_heap', threshold: { value } },
  ];
  return {
    refresh_interval: '0.25s',
    resource_monitors: [
      {
        name: 'envoy.resource_monitors.fixed_heap',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig',
          max_heap_size_bytes: maxHeapBytes,
        },
      },
      {
        // Enforced by the listeners themselves; needs no action.
        name: 'envoy.resource_monitors.global_downstream_max_connections',
        typed_config: {
          '@type':
            'type.googleapis.com/envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig',
          max_active_downstream_connections: maxConnections,
        },
      },
    ],
    actions: [
      { name: 'envoy.overload_actions.shrink_heap', triggers: heapTrigger(0.95) },
      { name: 'envoy.overload_actions.stop_accepting_requests', triggers: heapTrigger(0.98) },
    ],
  };
}
