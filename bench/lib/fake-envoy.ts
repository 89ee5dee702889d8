/**
 * A fake Envoy in its own process, so the control plane's memory is measured without the client's:
 * it opens one ADS stream (delta or SotW) to `--address`, subscribes like Envoy (CDS and LDS
 * wildcard, EDS for every EDS cluster it learns, RDS for `ingress` or, per host, SRDS wildcard and
 * RDS for every RouteConfiguration its scopes name), ACKs every response, and
 * prints one JSON line per response on stdout with the response's wire size and what it now holds.
 *
 *   node --import tsx bench/lib/fake-envoy.ts --address=127.0.0.1:PORT --mode=delta
 */
import { connectAds, type AdsClient, type AdsMode } from '../../test/support/ads-client.js';
import { decodeMessage } from '../../src/xds/codec/codec.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  SHORT_NAMES,
  TYPE_PREFIX,
  type ResourceType,
} from '../../src/xds/codec/type-urls.js';
import { parseArgs } from './child.js';

/** One line this process prints per response it ACKed. */
export interface FakeEnvoyLine {
  readonly type: string;
  readonly bytes: number;
  readonly resources: number;
  readonly removed: number;
  /** Resources held per short type name after applying the response. */
  readonly held: Readonly<Record<string, number>>;
  /** Version held for `ingress` (delta: its resource version; SotW: the RDS type version). */
  readonly routesVersion: string | undefined;
}

const url = (type: ResourceType): string => TYPE_PREFIX + type;

/** Scope name -> the RouteConfiguration it names, for the scopes held. */
const scopeTargets = new Map<string, string>();

/**
 * Makes `watched` (the names subscribed for `type`) equal `wanted`, as Envoy does for the EDS of its
 * clusters and the RDS of its scopes: delta subscribes and unsubscribes the difference, SotW sends
 * the whole new list. Held resources no longer watched are dropped.
 */
function follow(
  client: AdsClient,
  mode: AdsMode,
  type: ResourceType,
  watched: Set<string>,
  wanted: Iterable<string>,
): void {
  const next = new Set(wanted);
  const added = [...next].filter((name) => !watched.has(name));
  const gone = [...watched].filter((name) => !next.has(name));
  if (added.length === 0 && gone.length === 0) return;
  for (const name of added) watched.add(name);
  for (const name of gone) watched.delete(name);
  if (mode === 'delta') {
    client.deltaRequest({
      type_url: url(type),
      resource_names_subscribe: added,
      resource_names_unsubscribe: gone,
    });
  } else {
    client.request({ type_url: url(type), resource_names: [...watched] });
  }
  const held = client.resources.get(url(type));
  for (const name of gone) held?.delete(name);
}

async function main(): Promise<void> {
  const args = parseArgs();
  const address = args.get('address');
  const mode = args.get('mode') as AdsMode | undefined;
  if (address === undefined || (mode !== 'delta' && mode !== 'sotw'))
    throw new Error('need --address and --mode=delta|sotw');
  const client = connectAds(address, { mode, nodeId: `bench-fake-envoy-${mode}`, timeoutMs: 600_000 });
  process.on('SIGTERM', () => {
    client.close();
    process.exit(0);
  });
  const edsNames = new Set<string>();
  // `ingress` (single delivery) plus every RouteConfiguration a held scope names (per host).
  const rdsNames = new Set<string>(['ingress']);
  let rdsSubscribed = false;
  client.subscribe(url(CLUSTER_TYPE));
  client.subscribe(url(LISTENER_TYPE));
  for (;;) {
    const response = await client.next();
    client.ack(response);
    client.received.length = 0;
    if (response.typeUrl === url(CLUSTER_TYPE)) {
      // Like Envoy: watch the endpoints of every cluster held, and drop the watch of removed ones.
      follow(
        client,
        mode,
        CLUSTER_LOAD_ASSIGNMENT_TYPE,
        edsNames,
        client.resources.get(url(CLUSTER_TYPE))?.keys() ?? [],
      );
    }
    if (response.typeUrl === url(SCOPED_ROUTE_CONFIGURATION_TYPE)) {
      for (const resource of response.resources) {
        const scope = decodeMessage(SCOPED_ROUTE_CONFIGURATION_TYPE, resource.value);
        scopeTargets.set(resource.name, String(scope.route_configuration_name ?? ''));
      }
      for (const name of response.removed) scopeTargets.delete(name);
      const held = client.resources.get(url(SCOPED_ROUTE_CONFIGURATION_TYPE));
      for (const name of scopeTargets.keys()) if (held?.has(name) !== true) scopeTargets.delete(name);
      follow(client, mode, ROUTE_CONFIGURATION_TYPE, rdsNames, ['ingress', ...scopeTargets.values()]);
    }
    if (response.typeUrl === url(LISTENER_TYPE) && !rdsSubscribed) {
      rdsSubscribed = true;
      // The listener routes through `ingress` over RDS, or per host through scopes over SRDS
      // (wildcard, as Envoy subscribes); the fake asks for both, and gets whichever exists.
      client.subscribe(url(ROUTE_CONFIGURATION_TYPE), ['ingress']);
      client.subscribe(url(SCOPED_ROUTE_CONFIGURATION_TYPE));
    }
    const held: Record<string, number> = {};
    for (const [typeUrl, names] of client.resources)
      held[SHORT_NAMES[typeUrl.slice(TYPE_PREFIX.length) as ResourceType]] = names.size;
    const line: FakeEnvoyLine = {
      type: SHORT_NAMES[response.typeUrl.slice(TYPE_PREFIX.length) as ResourceType],
      bytes: response.bytes,
      resources: response.resources.length,
      removed: response.removed.length,
      held,
      routesVersion: client.resources.get(url(ROUTE_CONFIGURATION_TYPE))?.get('ingress'),
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
}

await main();
