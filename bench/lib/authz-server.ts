/**
 * The ext_authz side of the authorization benchmark, in its own process so its CPU is measured
 * alone: Portcullis all-in-one (ADS + ext_authz on one grpc-js server, supervised Envoy) with the
 * config of `authz-config.ts`, and `--sessions` sessions in the memory store. Started by
 * `bench/suites/authz.ts` with an IPC channel; it answers:
 *
 *   ready   { proxyPort, adminUrl, cookie }   once Envoy is LIVE with the config applied
 *   cpu     { userUs, systemUs }              process.cpuUsage() of this process, on request
 *
 * and stops (Envoy included) on `stop` or when the parent goes away. With `--transport=lean` the
 * Checks go to the lean `node:http2` server (`h2-check-server.ts`) in this process instead: the
 * compiled `portcullis-authorize` cluster is re-published pointing at its port.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAllInOne } from '../../src/cmd/all-in-one.js';
import { startH2CheckServer } from '../../src/authorize/ext-authz/h2-check-server.js';
import { AUTHORIZE_CLUSTER } from '../../src/contract/names.js';
import { adminRequest } from '../../src/envoy/admin.js';
import type { Logger } from '../../src/shared/logger.js';
import { envoyHasApplied } from '../../test/support/portcullis.js';
import { freePort } from '../../test/support/ports.js';
import { CLUSTER_TYPE } from '../../src/xds/codec/type-urls.js';
import { buildSnapshot } from '../../src/xds/snapshot/build-snapshot.js';
import { numberArg, parseArgs } from './child.js';
import { authzConfigYaml, benchSession, benchSessionId } from './authz-config.js';
import { until } from './poll.js';

/** Messages this process sends its parent. */
export type AuthzServerMessage =
  | { readonly type: 'ready'; readonly proxyPort: number; readonly adminUrl: string; readonly cookie: string }
  | { readonly type: 'cpu'; readonly userUs: number; readonly systemUs: number };

let stopping = false;
const logger: Logger = {
  debug: () => {},
  info: () => {},
  warn: (obj, msg) => {
    if (!stopping)
      process.stderr.write(`[authz-server warn] ${msg ?? ''} ${JSON.stringify(obj).slice(0, 300)}\n`);
  },
  error: (obj, msg) => {
    if (!stopping)
      process.stderr.write(`[authz-server error] ${msg ?? ''} ${JSON.stringify(obj).slice(0, 300)}\n`);
  },
  child: () => logger,
};

type Running = Awaited<ReturnType<typeof startAllInOne>>;

/** Serves Check from the lean server and points Envoy's ext_authz cluster at it. */
async function useLeanServer(running: Running, adminUrl: string): Promise<void> {
  const lean = await startH2CheckServer({
    host: '127.0.0.1',
    port: 0,
    authorize: running.authorize.authorizer(),
    logger,
  });
  const good = running.reloader.lastGoodBuild();
  if (good === undefined) throw new Error('no good build to modify');
  const compiled = structuredClone(good.compiled) as typeof good.compiled;
  const cluster = compiled[CLUSTER_TYPE].find((entry) => entry.name === AUTHORIZE_CLUSTER);
  if (cluster === undefined) throw new Error('no portcullis-authorize cluster');
  (
    cluster.message as {
      load_assignment: {
        endpoints: {
          lb_endpoints: { endpoint: { address: { socket_address: { port_value: number } } } }[];
        }[];
      };
    }
  ).load_assignment.endpoints[0]!.lb_endpoints[0]!.endpoint.address.socket_address.port_value = lean.port;
  running.store.publish(buildSnapshot(compiled));
  await until(() => envoyHasApplied(adminUrl, running), 'Envoy to use the lean Check server', {
    intervalMs: 200,
    timeoutMs: 60_000,
  });
}

async function main(): Promise<void> {
  const args = parseArgs();
  const upstream = args.get('upstream');
  if (upstream === undefined) throw new Error('missing --upstream=host:port');
  const sessionCount = numberArg(args, 'sessions', 100_000);
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-bench-authz-'));
  const configPath = join(dir, 'config.yaml');
  const [proxyPort, grpcPort, adminPort] = [await freePort(), await freePort(), await freePort()];
  writeFileSync(
    configPath,
    authzConfigYaml({
      address: `127.0.0.1:${proxyPort}`,
      grpcAddress: `127.0.0.1:${grpcPort}`,
      adminAddress: `127.0.0.1:${adminPort}`,
      upstream,
      extraRoutes: numberArg(args, 'routes', 0),
    }),
  );
  const running = await startAllInOne({ configPath, env: {}, logger, adsApiType: 'DELTA_GRPC' });
  const stop = async (): Promise<void> => {
    stopping = true;
    await running.stop({ graceMs: 1000 });
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('disconnect', () => void stop());
  process.on('message', (message: { type: string }) => {
    if (message.type === 'stop') void stop();
    if (message.type === 'cpu') {
      const usage = process.cpuUsage();
      process.send?.({
        type: 'cpu',
        userUs: usage.user,
        systemUs: usage.system,
      } satisfies AuthzServerMessage);
    }
  });
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  await until(
    async () => (await adminRequest(adminUrl, '/ready', { timeoutMs: 1000 })).body.trim() === 'LIVE',
    'Envoy LIVE',
    { timeoutMs: 60_000 },
  );
  await until(() => envoyHasApplied(adminUrl, running), 'Envoy to apply the config', {
    intervalMs: 200,
    timeoutMs: 120_000,
  });
  const now = Date.now();
  for (let index = 0; index < sessionCount; index++) {
    await running.sessions.put(benchSession(index, now));
  }
  if (args.get('transport') === 'lean') await useLeanServer(running, adminUrl);
  const cookie = `theme=dark; _portcullis=${running.authorize.handles().issue(benchSessionId(sessionCount >> 1))}`;
  process.send?.({ type: 'ready', proxyPort, adminUrl, cookie } satisfies AuthzServerMessage);
}

await main();
