import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { encodeCheckResponse } from '../../src/authorize/ext-authz/check-codec.js';
import {
  HTTP_FILTER_EXT_AUTHZ,
  HTTP_FILTER_LUA,
  HTTP_PROTOCOL_OPTIONS_KEY,
} from '../../src/contract/names.js';
import { locateEnvoy } from '../../src/envoy/locate.js';
import { publicRouteLuaConfig } from '../../src/xds/compile/identity-strip.js';
import { luaFilter } from '../../src/xds/compile/lua-filter.js';
import { freePort } from '../../test/support/ports.js';
import { ROUTER_FILTER, staticHttpListener, staticLoopbackCluster } from '../../test/support/static-envoy.js';
import { REPO_ROOT } from './child.js';
import { pollUntil200 } from './poll.js';

/** Host of the floor Envoy's public route (ext_authz off), the floor's bare baseline. */
export const FLOOR_BARE_HOST = 'bare.floor.test';
/** Host of the floor Envoy's protected route, whose Checks the do-nothing responder answers. */
export const FLOOR_AUTHZ_HOST = 'authz.floor.test';

/**
 * A running floor: a static Envoy with two listeners, the same routes on each, whose ext_authz
 * calls the do-nothing native responder on one and the do-nothing Node.js responder on the other.
 */
export interface AuthzFloor {
  /** The listener whose ext_authz calls the native responder (`floor-responder.c`), for wrk. */
  readonly url: string;
  /** The listener whose ext_authz calls the Node.js responder (`floor-responder-node.ts`). */
  readonly nodeUrl: string;
  stop(): Promise<void>;
}

/** What the floor needs from the benchmark. */
export interface AuthzFloorOptions {
  /** The upstream both floor routes forward to (the main measurement's). */
  readonly upstreamPort: number;
  /** The headers Portcullis's allow set on the upstream request, so the floor answers the same. */
  readonly allowHeaders: readonly (readonly [string, string])[];
  /** ext_authz's gRPC timeout, as Portcullis compiles it. */
  readonly timeoutMs: number;
  /** The session cookie's name, for the credential-strip script public routes run. */
  readonly cookieName: string;
}

/**
 * The static bootstrap of the floor Envoy: two listeners with the same bare route and authz route
 * (the first calling the native responder, the second the Node.js one), with the per-request
 * work Portcullis compiles for them: the bare route is public (ext_authz off, the
 * compiler's own Lua credential-strip script on), and the ext_authz filter has the settings
 * `extAuthzFilter` compiles (gRPC over `envoy_grpc`, V3, fail closed, 503 on error, the same
 * timeout), pointing at the responder over HTTP/2. The Lua parts are the compiler's objects; the
 * rest is written here because Envoy reads Durations in JSON only in their string form.
 */
function floorBootstrap(
  ports: {
    listener: number;
    nodeListener: number;
    admin: number;
    responder: number;
    nodeResponder: number;
    upstream: number;
  },
  options: AuthzFloorOptions,
): string {
  const http2 = {
    typed_extension_protocol_options: {
      [HTTP_PROTOCOL_OPTIONS_KEY]: {
        '@type': `type.googleapis.com/${HTTP_PROTOCOL_OPTIONS_KEY}`,
        explicit_http_config: { http2_protocol_options: {} },
      },
    },
  };
  const publicRoute = {
    [HTTP_FILTER_EXT_AUTHZ]: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute',
      disabled: true,
    },
    [HTTP_FILTER_LUA]: publicRouteLuaConfig(),
  };
  const extAuthz = (cluster: string): Record<string, unknown> => ({
    name: HTTP_FILTER_EXT_AUTHZ,
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
      grpc_service: {
        envoy_grpc: { cluster_name: cluster },
        timeout: `${options.timeoutMs / 1000}s`,
      },
      transport_api_version: 'V3',
      failure_mode_allow: false,
      status_on_error: { code: 503 },
    },
  });
  const route = { match: { prefix: '/' }, route: { cluster: 'floor-upstream' } };
  const listener = (name: string, port: number, authorizeCluster: string): Record<string, unknown> =>
    staticHttpListener(name, port, {
      stat_prefix: name,
      http_filters: [luaFilter(options.cookieName, false), extAuthz(authorizeCluster), ROUTER_FILTER],
      route_config: {
        virtual_hosts: [
          {
            name: 'bare',
            domains: [FLOOR_BARE_HOST],
            routes: [{ ...route, typed_per_filter_config: publicRoute }],
          },
          { name: 'authz', domains: [FLOOR_AUTHZ_HOST], routes: [route] },
        ],
      },
    });
  return JSON.stringify({
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: ports.admin } } },
    static_resources: {
      listeners: [
        listener('floor', ports.listener, 'floor-authorize'),
        listener('floor-node', ports.nodeListener, 'floor-authorize-node'),
      ],
      clusters: [
        staticLoopbackCluster('floor-upstream', ports.upstream),
        staticLoopbackCluster('floor-authorize', ports.responder, http2),
        staticLoopbackCluster('floor-authorize-node', ports.nodeResponder, http2),
      ],
    },
  });
}

/** Resolves with the first line `child` prints on stdout; rejects if it exits first. */
function firstLine(child: ChildProcess, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    if (child.stdout === null) {
      reject(new Error(`${what}: no stdout`));
      return;
    }
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      lines.close();
      resolve(line.trim());
    });
    child.once('exit', (code) =>
      reject(new Error(`${what} exited with ${String(code)} before it was ready`)),
    );
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Builds and starts the floor of the authorization benchmark: `floor-responder.c` compiled with the
 * system C compiler (`cc`), answering every Check with the allow Portcullis gave (same headers),
 * behind a second Envoy (same binary, same concurrency) whose ext_authz settings are Portcullis's.
 * Added latency through it is what any Check server pays on this host: Envoy's ext_authz work,
 * the loopback round trip, the scheduling. The same Envoy's second listener calls
 * `floor-responder-node.ts`, the same responder in Node.js (its own process), for what a Node.js
 * event loop adds to that. Rejects with the step that failed (no compiler, no Envoy, a route
 * that never answers 200); everything started is stopped again then.
 */
export async function startAuthzFloor(options: AuthzFloorOptions): Promise<AuthzFloor> {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-bench-floor-'));
  const children: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(children.map(stopChild));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const binary = join(dir, 'floor-responder');
    try {
      await promisify(execFile)('cc', [
        '-O2',
        '-pthread',
        '-o',
        binary,
        `${REPO_ROOT}bench/lib/floor-responder.c`,
      ]);
    } catch (err) {
      throw new Error(
        `floor: compiling bench/lib/floor-responder.c with cc failed: ${(err as Error).message}`,
      );
    }
    const responseFile = join(dir, 'check-response.bin');
    writeFileSync(
      responseFile,
      encodeCheckResponse({
        kind: 'allow',
        setHeaders: options.allowHeaders,
        removeHeaders: ['cookie'],
        reasons: [],
      }),
    );
    const responder = spawn(binary, [responseFile], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(responder);
    const responderPort = Number(await firstLine(responder, 'floor-responder'));
    const nodeResponder = spawn(
      process.execPath,
      ['--import', 'tsx', `${REPO_ROOT}bench/lib/floor-responder-node.ts`, responseFile],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(nodeResponder);
    const nodeResponderPort = Number(await firstLine(nodeResponder, 'floor-responder-node'));
    const [listener, nodeListener, admin] = [await freePort(), await freePort(), await freePort()];
    const configPath = join(dir, 'floor-envoy.json');
    writeFileSync(
      configPath,
      floorBootstrap(
        {
          listener,
          nodeListener,
          admin,
          responder: responderPort,
          nodeResponder: nodeResponderPort,
          upstream: options.upstreamPort,
        },
        options,
      ),
    );
    const envoy = spawn(
      (await locateEnvoy()).path,
      ['-c', configPath, '--concurrency', '2', '--disable-hot-restart', '-l', 'error'],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    children.push(envoy);
    await pollUntil200(listener, FLOOR_BARE_HOST, { intervalMs: 50, timeoutMs: 20_000 });
    await pollUntil200(listener, FLOOR_AUTHZ_HOST, { intervalMs: 50, timeoutMs: 5_000 });
    await pollUntil200(nodeListener, FLOOR_AUTHZ_HOST, { intervalMs: 50, timeoutMs: 5_000 });
    return { url: `http://127.0.0.1:${listener}/`, nodeUrl: `http://127.0.0.1:${nodeListener}/`, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
