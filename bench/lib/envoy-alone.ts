/**
 * Envoy by itself, loading from files the very resources Portcullis serves it: the baseline of
 * the cold-start suite. `portcullis compile -c <config>` prints the resources of a config (as
 * YAML, proto3 JSON field names, private keys redacted: the bench configs have none); the Envoy
 * and its bootstrap are the ones Portcullis started for the same config (read from /proc while it
 * runs: same binary, same command-line options, same runtime, overload manager and admin
 * settings), so the only difference left is where the resources come from.
 *
 * Envoy reads them through `path_config_source` (filesystem subscriptions, each file a
 * DiscoveryResponse): LDS and CDS from the bootstrap's `dynamic_resources`, the listener's scoped
 * RDS and its fast-path filter (ECDS) from files too. Two changes of form, no change of content,
 * because a filesystem subscription takes every resource of its file and Envoy wants one resource
 * per EDS or RDS subscription (10,000 files and watches would exceed the inotify limits):
 * each EDS cluster becomes a STATIC cluster carrying its ClusterLoadAssignment inline, and each
 * scope carries its RouteConfiguration inline (`route_configuration`) instead of naming it.
 */
import { readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import jsYaml from 'js-yaml';

/** The Envoy a Portcullis process started: its binary, command line and bootstrap. */
export interface CapturedEnvoy {
  readonly pid: number;
  readonly binary: string;
  readonly args: readonly string[];
  readonly bootstrap: Readonly<Record<string, unknown>>;
}

type Json = Record<string, unknown>;

const TYPE = 'type.googleapis.com/envoy.config.';
const TYPES = {
  listener: `${TYPE}listener.v3.Listener`,
  cluster: `${TYPE}cluster.v3.Cluster`,
  scope: `${TYPE}route.v3.ScopedRouteConfiguration`,
  filter: `${TYPE}core.v3.TypedExtensionConfig`,
};

/**
 * The Envoy running in process group `pgid` (Portcullis's command leads its group and Envoy runs
 * in it), read from /proc: its executable, arguments and the bootstrap file its `-c` names.
 * Throws when there is none.
 */
export function captureEnvoy(pgid: number): CapturedEnvoy {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name: state, ppid, pgrp.
      const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      const binary = readlinkSync(`/proc/${entry}/exe`);
      if (pgrp !== pgid || basename(binary) !== 'envoy') continue;
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').slice(1, -1);
      const config = args[args.indexOf('-c') + 1];
      if (config === undefined) throw new Error(`Envoy ${entry} has no -c`);
      // The bootstrap is JSON or YAML; js-yaml reads both.
      return {
        pid: Number(entry),
        binary,
        args,
        bootstrap: jsYaml.load(readFileSync(config, 'utf8')) as Json,
      };
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('Envoy')) throw err;
      // A process that exited meanwhile, or one we may not read.
    }
  }
  throw new Error(`no Envoy in process group ${pgid}`);
}

/** Resource files for one compiled config, written once; `run` writes what differs per run. */
export interface EnvoyAloneFiles {
  /** The listeners, with their config sources pointing at the files. */
  readonly listeners: readonly Json[];
  readonly dir: string;
  readonly clusters: number;
  readonly scopes: number;
}

/** A DiscoveryResponse file of `resources` of `type`. */
function writeResponse(path: string, type: string, resources: readonly Json[]): void {
  writeFileSync(
    path,
    JSON.stringify({ version_info: '1', resources: resources.map((r) => ({ '@type': type, ...r })) }),
  );
}

/** `value` with every ADS config source replaced by the file of its kind (by its field's name). */
function fromFiles(value: unknown, paths: Readonly<Record<string, string>>, key = ''): unknown {
  if (Array.isArray(value)) return value.map((member) => fromFiles(member, paths, key));
  if (value === null || typeof value !== 'object') return value;
  const object = value as Json;
  if ('ads' in object) {
    const path = paths[key];
    if (path === undefined) throw new Error(`an ADS config source at ${key} has no file`);
    return { path_config_source: { path }, resource_api_version: 'V3' };
  }
  return Object.fromEntries(
    Object.entries(object).map(([name, member]) => [name, fromFiles(member, paths, name)]),
  );
}

/**
 * Reads `portcullis compile` output at `compiledPath` and writes the cluster, scope, filter and
 * (empty) route files into `dir`. Throws on a resource shape it does not know (a product change
 * this baseline must follow).
 */
export function prepareEnvoyAlone(compiledPath: string, dir: string): EnvoyAloneFiles {
  const compiled = jsYaml.load(readFileSync(compiledPath, 'utf8')) as Record<string, Json[] | undefined>;
  const list = (name: string): Json[] => compiled[name] ?? [];
  const endpoints = new Map(list('endpoints').map((cla) => [cla['cluster_name'] as string, cla]));
  const clusters = list('clusters').map((cluster) => {
    if (cluster['type'] !== 'EDS') return cluster;
    const { eds_cluster_config: _eds, ...rest } = cluster;
    const assignment = endpoints.get(cluster['name'] as string);
    if (assignment === undefined) throw new Error(`cluster ${String(cluster['name'])} has no endpoints`);
    return { ...rest, type: 'STATIC', load_assignment: assignment };
  });
  const routes = new Map(list('routes').map((route) => [route['name'] as string, route]));
  const scopes = list('scopes').map((scope) => {
    const { route_configuration_name: name, ...rest } = scope;
    const route = routes.get(name as string);
    if (route === undefined) throw new Error(`scope ${String(scope['name'])} names no route configuration`);
    return { ...rest, route_configuration: route };
  });
  const paths = {
    scoped_rds_config_source: join(dir, 'srds.json'),
    rds_config_source: join(dir, 'rds.json'),
    config_source: join(dir, 'ecds.json'),
  };
  writeResponse(join(dir, 'cds.json'), TYPES.cluster, clusters);
  writeResponse(paths.scoped_rds_config_source, TYPES.scope, scopes);
  writeResponse(paths.rds_config_source, `${TYPE}route.v3.RouteConfiguration`, []);
  writeResponse(paths.config_source, TYPES.filter, list('filters'));
  const listeners = list('listeners').map((listener) => fromFiles(listener, paths) as Json);
  return { listeners, dir, clusters: clusters.length, scopes: scopes.length };
}

/**
 * The command line of one Envoy-alone run: the captured Envoy's options with its bootstrap
 * replaced by one that reads LDS and CDS from the files (listener on `proxyPort`, admin on
 * `adminPort`), the ADS cluster dropped, and hot restart off (no shared-memory segment to
 * clean up; it does not touch loading).
 */
export function envoyAloneCommand(
  files: EnvoyAloneFiles,
  captured: CapturedEnvoy,
  ports: { readonly proxyPort: number; readonly adminPort: number },
  run: string,
): { command: string; args: string[] } {
  const lds = join(files.dir, `lds-${run}.json`);
  writeResponse(
    lds,
    TYPES.listener,
    files.listeners.map((listener) => ({
      ...listener,
      address: { socket_address: { address: '127.0.0.1', port_value: ports.proxyPort } },
    })),
  );
  const bootstrap = captured.bootstrap as Json;
  const ads = (bootstrap['dynamic_resources'] as Json | undefined)?.['ads_config'] as Json | undefined;
  const adsCluster = (
    (ads?.['grpc_services'] as Json[] | undefined)?.[0]?.['envoy_grpc'] as Json | undefined
  )?.['cluster_name'];
  const statics = (bootstrap['static_resources'] ?? {}) as Json;
  const source = (path: string): Json => ({ path_config_source: { path }, resource_api_version: 'V3' });
  const path = join(files.dir, `bootstrap-${run}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      ...bootstrap,
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: ports.adminPort } } },
      dynamic_resources: { lds_config: source(lds), cds_config: source(join(files.dir, 'cds.json')) },
      static_resources: {
        ...statics,
        clusters: ((statics['clusters'] ?? []) as Json[]).filter((cluster) => cluster['name'] !== adsCluster),
      },
    }),
  );
  const dropWithValue = new Set([
    '-c',
    '--config-path',
    '--admin-address-path',
    '--base-id-path',
    '--base-id',
  ]);
  const args: string[] = [];
  for (let i = 0; i < captured.args.length; i++) {
    const arg = captured.args[i] as string;
    if (dropWithValue.has(arg)) i++;
    else if (arg !== '--use-dynamic-base-id' && arg !== '--disable-hot-restart') args.push(arg);
  }
  return { command: captured.binary, args: ['-c', path, '--disable-hot-restart', ...args] };
}

/** The resident memory of process `pid` in bytes (`VmRSS`), NaN when it cannot be read. */
export function residentBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? NaN : Number(match[1]) * 1024;
  } catch {
    return NaN;
  }
}
