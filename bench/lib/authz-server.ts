/**
 * The ext_authz side of the authorization benchmark, in its own process so its CPU is measured
 * alone: Portcullis all-in-one (ADS and ext_authz on one gRPC port, supervised Envoy) with the
 * config of `authz-config.ts`, and `--sessions` sessions in the memory store. Started by
 * `bench/suites/authz.ts` with an IPC channel; it answers:
 *
 *   ready   { proxyPort, adminUrl, cookie }   once Envoy is LIVE with the config applied
 *   cpu     { userUs, systemUs }              process.cpuUsage() of this process, on request
 *
 * and stops (Envoy included) on `stop` or when the parent goes away. `--transport=h2c` (default,
 * production) serves Envoy's Checks from the h2c Check server on the shared gRPC port;
 * `--transport=grpc-js` serves them from grpc-js instead, for comparison. Either way, Checks for
 * `FIXED_DECISION_HOST` get the first decision made for that host again (`fixedDecisionAuthorizer`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAllInOne } from '../../src/cmd/all-in-one.js';
import { adminRequest } from '../../src/envoy/admin.js';
import type { Logger } from '../../src/shared/logger.js';
import { envoyHasApplied } from '../../test/support/portcullis.js';
import { freePort } from '../../test/support/ports.js';
import { numberArg, parseArgs } from './child.js';
import type { Authorizer } from '../../src/authorize/ext-authz/authorization-service.js';
import type { Decision } from '../../src/authorize/decision.js';
import { authzConfigYaml, benchSession, benchSessionId, FIXED_DECISION_HOST } from './authz-config.js';
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

/**
 * `authorizer`, except that requests for `FIXED_DECISION_HOST` get the first allow decision it
 * made for that host, unchanged: the benchmark's ext_authz hop without the decision's own work.
 */
function fixedDecisionAuthorizer(authorizer: Authorizer): Authorizer {
  let fixed: Decision | undefined;
  return (request) => {
    if (request.host !== FIXED_DECISION_HOST) return authorizer(request);
    if (fixed !== undefined) return fixed;
    const decision = authorizer(request);
    if (!(decision instanceof Promise) && decision.kind === 'allow') fixed = decision;
    return decision;
  };
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
  const transport = args.get('transport') ?? 'h2c';
  if (transport !== 'h2c' && transport !== 'grpc-js') throw new Error(`unknown --transport=${transport}`);
  const running = await startAllInOne({
    configPath,
    env: {},
    logger,
    adsApiType: 'DELTA_GRPC',
    checkTransport: transport,
    wrapAuthorizer: fixedDecisionAuthorizer,
  });
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
  const cookie = `theme=dark; _portcullis=${running.authorize.handles().issue(benchSessionId(sessionCount >> 1))}`;
  process.send?.({ type: 'ready', proxyPort, adminUrl, cookie } satisfies AuthzServerMessage);
}

await main();
