import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SIGN_IN_YAML } from '../../test/support/sign-in-config.js';
import type { Context } from '../lib/context.js';
import { configYaml } from '../lib/config-gen.js';
import { startUpstream, statusOf, type Upstream } from '../lib/http.js';
import { startPortcullisChild } from '../lib/portcullis-process.js';
import type { SuiteResult } from '../lib/report.js';
import { loopbackPorts, waitServing, type Ports } from '../lib/serving.js';
import { round, summarize } from '../lib/stats.js';
import { requireWrk, runWrk, type WrkResult } from '../lib/wrk.js';

const PUBLIC_HOST = 'public.bench.test';
const AUTHZ_HOST = 'authz.bench.test';
/** A fixed `shared_secret`, so the session handles the child issues are the ones Portcullis accepts. */
const SHARED_SECRET = Buffer.alloc(32, 9).toString('base64');
const SESSIONS = 100_000;
const CONNECTIONS = 16;
const RATIO_BUDGET = 0.35;
/** The signed identity assertion `pass_identity_headers` adds (the product's ext_authz puts it). */
const ASSERTION_HEADER = 'x-portcullis-jwt-assertion';

/** The two measured routes, to the same upstream: one public, one behind ext_authz. */
function authzConfig(ports: Ports, upstream: Upstream): string {
  const to = `http://127.0.0.1:${upstream.port}`;
  const routes = [
    `  - from: https://${PUBLIC_HOST}\n    to: ${to}\n    allow_public_unauthenticated_access: true\n`,
    `  - from: https://${AUTHZ_HOST}\n    to: ${to}\n    allow_any_authenticated_user: true\n    pass_identity_headers: true\n`,
  ];
  return configYaml(
    ports,
    routes,
    `shared_secret: ${SHARED_SECRET}\njwt_claims_headers: [department]\n${SIGN_IN_YAML}`,
  );
}

/** One repetition: both routes at `CONNECTIONS` connections, then both at one connection. */
interface Repetition {
  readonly publicLoaded: WrkResult;
  readonly authzLoaded: WrkResult;
  readonly publicOne: WrkResult;
  readonly authzOne: WrkResult;
}

/**
 * Authorized throughput and added latency, side by side on one Envoy and one upstream: a public
 * route (Envoy skips ext_authz) and a protected route (`allow_any_authenticated_user`,
 * `pass_identity_headers`) requested with a valid session cookie, Portcullis all-in-one in its own
 * process with 100,000 sessions in its store, load from wrk on loopback. Each repetition runs
 * public and authz back to back at 16 connections (requests per second), then at one connection
 * (p50); the suite quotes the medians of the per-repetition ratio and difference.
 */
export async function authzSuite(context: Context): Promise<SuiteResult> {
  requireWrk();
  const reps = context.quick ? 2 : 8;
  const seconds = context.quick ? 1 : 2;
  const upstream = await startUpstream();
  const ports = await loopbackPorts();
  const configPath = join(context.workDir, 'authz.yaml');
  writeFileSync(configPath, authzConfig(ports, upstream));
  const repetitions: Repetition[] = [];
  try {
    const portcullis = await startPortcullisChild(context, {
      configPath,
      name: 'authz',
      sessions: SESSIONS,
      secret: SHARED_SECRET,
      timeoutMs: 600_000,
    });
    try {
      await waitServing(portcullis.started, ports, {
        clusters: 1,
        hosts: [PUBLIC_HOST],
        intervalMs: 100,
        timeoutMs: 60_000,
      });
      const authzHeaders = { Host: AUTHZ_HOST, Cookie: portcullis.cookie };
      const status = await statusOf(ports.proxyPort, AUTHZ_HOST, { headers: { cookie: portcullis.cookie } });
      if (status !== 200) throw new Error(`the protected route answered ${status} with the session cookie`);
      if (upstream.lastHeaders()[ASSERTION_HEADER] === undefined)
        throw new Error(`the upstream got no ${ASSERTION_HEADER}: pass_identity_headers had no effect`);
      const url = `http://127.0.0.1:${ports.proxyPort}/`;
      const load = (
        headers: Record<string, string>,
        connections: number,
        time = seconds,
      ): Promise<WrkResult> => runWrk({ url, headers, connections, seconds: time });
      // Warm-up: JIT, connection pools, the cached assertion.
      await load({ Host: PUBLIC_HOST }, CONNECTIONS, 1);
      await load(authzHeaders, CONNECTIONS, 2);
      for (let rep = 0; rep < reps; rep++) {
        // Pairs run back to back, in ABBA order over repetitions, so drifting load on a shared
        // machine hits both routes alike.
        const pair = async (connections: number): Promise<[WrkResult, WrkResult]> => {
          if (rep % 2 === 0) {
            const first = await load({ Host: PUBLIC_HOST }, connections);
            return [first, await load(authzHeaders, connections)];
          }
          const second = await load(authzHeaders, connections);
          return [await load({ Host: PUBLIC_HOST }, connections), second];
        };
        const [publicLoaded, authzLoaded] = await pair(CONNECTIONS);
        const [publicOne, authzOne] = await pair(1);
        const repetition: Repetition = { publicLoaded, authzLoaded, publicOne, authzOne };
        repetitions.push(repetition);
        context.progress(
          `authz ${rep + 1}/${reps}: public ${Math.round(publicLoaded.requestsPerSecond)} vs authz ${Math.round(authzLoaded.requestsPerSecond)} req/s; p50 ${publicOne.p50Us} vs ${authzOne.p50Us} us`,
        );
      }
    } finally {
      await portcullis.stop();
    }
  } finally {
    await upstream.stop();
  }
  const of = (pick: (r: Repetition) => number) => summarize(repetitions.map(pick));
  const ratio = of((r) => r.authzLoaded.requestsPerSecond / r.publicLoaded.requestsPerSecond);
  const added = of((r) => r.authzOne.p50Us - r.publicOne.p50Us);
  const publicRps = of((r) => r.publicLoaded.requestsPerSecond);
  const authzRps = of((r) => r.authzLoaded.requestsPerSecond);
  const publicP50 = of((r) => r.publicOne.p50Us);
  const authzP50 = of((r) => r.authzOne.p50Us);
  return {
    name: 'authz',
    how: `Same Envoy, same upstream: public route vs protected route (valid session cookie, pass_identity_headers; Portcullis via startAllInOne in its own process, ${SESSIONS.toLocaleString('en-US')} sessions); wrk on loopback, ${reps} repetitions of ${CONNECTIONS} connections then 1 connection, ${seconds} s each; medians of per-repetition ratio and difference.`,
    measurements: [
      {
        what: 'authorized / public requests per second',
        budget: `>= ${RATIO_BUDGET}`,
        value: ratio.median,
        unit: 'x',
        pass: ratio.median >= RATIO_BUDGET,
        detail: `${CONNECTIONS} connections: public ${Math.round(publicRps.median)} req/s, authz ${Math.round(authzRps.median)} req/s; per repetition ${ratio.runs.join(', ')}`,
      },
      {
        what: 'added p50 latency, one connection',
        budget: 'report',
        value: round(added.median),
        unit: 'us',
        pass: null,
        detail: `public p50 ${publicP50.median} us, authz p50 ${authzP50.median} us; per repetition ${added.runs.join(', ')} us`,
      },
    ],
    data: { sessions: SESSIONS, connections: CONNECTIONS, secondsPerRun: seconds, repetitions },
  };
}
