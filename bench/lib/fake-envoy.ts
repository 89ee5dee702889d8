/**
 * A fake Envoy in its own process, so the control plane's memory is measured without the client's:
 * it opens one ADS stream (delta or SotW) to `--address`, subscribes like Envoy (CDS and LDS
 * wildcard, EDS for every EDS cluster it learns, RDS for `ingress`), ACKs every response, and
 * prints one JSON line per response on stdout with the response's wire size and what it now holds.
 *
 *   node --import tsx bench/lib/fake-envoy.ts --address=127.0.0.1:PORT --mode=delta
 */
import { connectAds, type AdsMode } from '../../test/support/ads-client.js';
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
  let rdsSubscribed = false;
  client.subscribe(url(CLUSTER_TYPE));
  client.subscribe(url(LISTENER_TYPE));
  for (;;) {
    const response = await client.next();
    client.ack(response);
    client.received.length = 0;
    if (response.typeUrl === url(CLUSTER_TYPE)) {
      // Like Envoy: watch the endpoints of every cluster held, and drop the watch of removed ones.
      const clusters = new Set(client.resources.get(url(CLUSTER_TYPE))?.keys() ?? []);
      const added = [...clusters].filter((name) => !edsNames.has(name));
      const gone = [...edsNames].filter((name) => !clusters.has(name));
      for (const name of added) edsNames.add(name);
      for (const name of gone) edsNames.delete(name);
      if (added.length > 0 || gone.length > 0) {
        if (mode === 'delta') {
          client.deltaRequest({
            type_url: url(CLUSTER_LOAD_ASSIGNMENT_TYPE),
            resource_names_subscribe: added,
            resource_names_unsubscribe: gone,
          });
        } else {
          client.request({ type_url: url(CLUSTER_LOAD_ASSIGNMENT_TYPE), resource_names: [...edsNames] });
        }
        const held = client.resources.get(url(CLUSTER_LOAD_ASSIGNMENT_TYPE));
        for (const name of gone) held?.delete(name);
      }
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
