import { isIP } from 'node:net';
import type { ServiceName } from './types.js';
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
  if (allInOne && values.get('authorize_service_url') !== undefined) {
    reader.problem(
      values.path('authorize_service_url'),
      'must not be set in all-in-one mode (services: all): authorize runs in this process, and another address would only make every request fail later with a gRPC deadline error; remove authorize_service_url',
    );
  }
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
  if (address === undefined || values.get('grpc_insecure') === true) return;
  const host = address.slice(0, address.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
  if (!loopback) {
    reader.problem(
      values.path('grpc_address'),
      `${address} is not loopback and the gRPC port has no TLS (not supported yet): keep it on 127.0.0.1, or set grpc_insecure: true to serve ADS and ext_authz in the clear on a private network`,
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
    let url: URL | undefined;
    try {
      url = new URL(connection.reveal());
    } catch {
      url = undefined;
    }
    if (url === undefined || !['redis:', 'rediss:'].includes(url.protocol) || url.hostname === '') {
      reader.problem(
        connectionPath,
        'is not a redis:// or rediss:// URL with a host (the value is secret and not shown)',
      );
    }
  } else if (connection !== undefined) {
    reader.warn(connectionPath, `is ignored: databroker_storage_type is ${type ?? 'memory'}`);
  }
}
