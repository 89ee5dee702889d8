import { isIP } from 'node:net';
import type { ServiceName } from './types.js';
import { parseRedisConnectionString, RedisUrlError } from '../shared/redis-url.js';
import type { ParsedValues } from './parsed-values.js';
import type { Reader } from './value-readers.js';

/** The services a process runs, resolved from `services`. */
export interface ServicePlan {
  readonly services: readonly ServiceName[];
  readonly allInOne: boolean;
  /** True when authenticate or proxy runs here, so the HTTP(S) listener is served. */
  readonly servesHttp: boolean;
}

const EVERY: readonly ServiceName[] = ['authenticate', 'authorize', 'proxy', 'databroker'];
const SECRET_HINT = 'generate one with `head -c32 /dev/urandom | base64`';

/**
 * Resolves `services` and checks the settings that depend on it: in all-in-one mode
 * `authorize_service_url` must be unset (authorize runs in this process; pointing elsewhere only
 * shows up later as gRPC deadline errors); split deployments need `shared_secret`, and
 * `cookie_secret` where authenticate or proxy run.
 */
export function checkServices(reader: Reader, values: ParsedValues): ServicePlan {
  const listed = values.get<string[]>('services') ?? ['all'];
  const services = listed.includes('all') ? EVERY : EVERY.filter((name) => listed.includes(name));
  if (listed.includes('all') && listed.length > 1) {
    reader.warn(values.path('services'), '`all` already runs every service; the other names are redundant');
  }
  const allInOne = services.length === EVERY.length;
  const servesHttp = services.includes('authenticate') || services.includes('proxy');
  checkServiceUrls(reader, values, services);
  if (!allInOne) {
    const mode = `services: ${services.join(',')}`;
    if (values.get('shared_secret') === undefined && !values.failed('shared_secret')) {
      reader.problem(
        'shared_secret',
        `is required when services run in separate processes (${mode}): every service must share it; ${SECRET_HINT}`,
      );
    }
    if (servesHttp && values.get('cookie_secret') === undefined && !values.failed('cookie_secret')) {
      reader.problem(
        'cookie_secret',
        `is required when authenticate or proxy run on their own (${mode}); ${SECRET_HINT}`,
      );
    }
  }
  if (
    services.includes('authenticate') &&
    !allInOne &&
    values.get('authenticate_service_url') === undefined
  ) {
    reader.problem(
      'authenticate_service_url',
      'is required when the authenticate service runs on its own: set its public https URL',
    );
  }
  checkDatabrokerStorage(reader, values);
  checkGrpcTransport(reader, values);
  return { services, allInOne, servesHttp };
}

/**
 * `grpc_address` off loopback is an error unless `grpc_insecure: true`: the port has no TLS, so
 * the credential Envoy presents and every resource it receives (private keys included) would
 * cross the network in the clear. Loopback is 127.0.0.0/8, ::1 or `localhost`; an empty host
 * (`:5443`) listens on every interface.
 */
function checkGrpcTransport(reader: Reader, values: ParsedValues): void {
  const address = values.get<string>('grpc_address');
  if (address === undefined || values.get('grpc_insecure') === true || values.get('tls_derive') !== undefined)
    return;
  const host = address.slice(0, address.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  if (!isLoopbackHost(host)) {
    reader.problem(
      values.path('grpc_address'),
      `${address} is not loopback and the gRPC port has no TLS: keep it on 127.0.0.1, set tls_derive to serve TLS with certificates derived from shared_secret, or set grpc_insecure: true to serve it in the clear on a private network`,
    );
  }
}

function checkDatabrokerStorage(reader: Reader, values: ParsedValues): void {
  const type = values.get<string>('databroker_storage_type');
  const connection = values.get<{ reveal(): string }>('databroker_storage_connection_string');
  const connectionPath = values.path('databroker_storage_connection_string');
  if (type === 'redis') {
    if (connection === undefined) {
      if (!values.failed('databroker_storage_connection_string')) {
        reader.problem(
          'databroker_storage_connection_string',
          'is required with databroker_storage_type: redis (a redis:// or rediss:// URL)',
        );
      }
      return;
    }
    try {
      parseRedisConnectionString(connection.reveal());
    } catch (err) {
      // The reason only: the value is secret (it may hold a password) and is never shown.
      const reason = err instanceof RedisUrlError ? err.reason : 'is not a Redis URL';
      reader.problem(
        connectionPath,
        `${reason} (the value is secret and not shown; see docs/reference.md for the forms)`,
      );
    }
  } else if (connection !== undefined) {
    reader.warn(connectionPath, `is ignored: databroker_storage_type is ${type ?? 'memory'}`);
  }
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/** Where each service is reached from this process, by the services it runs. */
const SERVICE_URLS = [
  {
    key: 'authorize_service_url',
    service: 'authorize',
    neededBy: ['proxy'],
    what: "where this proxy's Envoy sends ext_authz Checks",
  },
  {
    key: 'authorize_internal_service_url',
    service: 'authorize',
    neededBy: [],
    what: "where this proxy's Envoy sends ext_authz Checks",
  },
  {
    key: 'databroker_service_url',
    service: 'databroker',
    neededBy: ['authenticate', 'authorize'],
    what: 'where sessions are kept',
  },
  {
    key: 'authenticate_internal_service_url',
    service: 'authenticate',
    neededBy: ['proxy'],
    what: "where this proxy's Envoy reaches sign-in and the /.portcullis/ endpoints",
  },
] as const;

/**
 * The service URLs against `services`: a service that runs in this process is reached in-process,
 * so its URL must be unset (pointing elsewhere would only show up later as failing requests),
 * except the `*_internal_service_url`s, which also tell a sidecar Envoy where this process's HTTP
 * endpoints and ext_authz are; a service this process needs but does not run must have its URL.
 * Each URL is an origin: `https://` always when `tls_derive` is set; otherwise `https://` needs
 * `certificate_authority` (a TLS-terminating load balancer or mesh in front of the service, whose
 * certificate must name the URL's host: a DNS name, as Envoy checks a DNS SAN), and an `http://`
 * one off loopback needs `grpc_insecure` (the traffic, session handles included, is in the clear).
 * With both `tls_derive` and `certificate_authority`, the derived CA stays the only trust: a warning.
 */
function checkServiceUrls(reader: Reader, values: ParsedValues, services: readonly ServiceName[]): void {
  const derive = values.get('tls_derive') !== undefined;
  const ownCa = values.get('certificate_authority') !== undefined;
  if (derive && ownCa) {
    reader.warn(
      values.path('certificate_authority'),
      'is ignored with tls_derive set: internal connections trust only the CA derived from shared_secret; unset certificate_authority or tls_derive',
    );
  }
  for (const { key, service, neededBy, what } of SERVICE_URLS) {
    const url = values.get<URL>(key);
    const runsHere = services.includes(service);
    if (url === undefined) {
      const needers = neededBy.filter((name) => services.includes(name));
      if (!runsHere && needers.length > 0 && !values.failed(key)) {
        reader.problem(
          key,
          `is required: this process runs ${needers.join(' and ')} but not ${service} (services: ${services.join(',')}), so it must say ${what}`,
        );
      }
      continue;
    }
    const path = values.path(key);
    if (runsHere && !key.endsWith('_internal_service_url')) {
      const mode =
        services.length === EVERY.length
          ? 'must not be set in all-in-one mode (services: all)'
          : `must be unset with services: ${services.join(',')}`;
      reader.problem(
        path,
        `${mode}: ${service} runs in this process, and another address would only make requests fail later; remove ${key}`,
      );
      continue;
    }
    if (
      (url.pathname !== '/' && url.pathname !== '') ||
      url.search !== '' ||
      url.hash !== '' ||
      url.username !== ''
    ) {
      reader.problem(path, `must be an origin (scheme, host and port only): ${url.origin}`);
    } else if (derive && url.protocol !== 'https:') {
      reader.problem(
        path,
        `must be https:// with tls_derive set (internal connections use the derived TLS): https://${url.host}`,
      );
    } else if (!derive && url.protocol === 'https:') {
      if (!ownCa && !values.failed('certificate_authority')) {
        reader.problem(
          path,
          'https:// needs tls_derive or certificate_authority (the CA that signed the certificate served at this URL); set one, or use http:// on a private network',
        );
      } else if (ownCa && isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0) {
        reader.problem(
          path,
          `${url.hostname} is an IP address: with certificate_authority the service's certificate is checked against the URL's host, which must be a DNS name`,
        );
      }
    } else if (
      !derive &&
      !isLoopbackHost(url.hostname.replace(/^\[|\]$/g, '')) &&
      values.get('grpc_insecure') !== true
    ) {
      reader.problem(
        path,
        `${url.origin} is not loopback and would be reached without TLS: set tls_derive, use https:// with certificate_authority, or grpc_insecure: true on a private network`,
      );
    }
  }
}
