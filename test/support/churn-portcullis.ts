import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { stringify } from 'yaml';
import { startAllInOne, type AllInOne } from '../../src/cmd/all-in-one.js';
import { recordingLogger, type LogRecord } from '../../src/shared/logger.js';
import type { Session } from '../../src/session/session.js';
import { CHURN_USER } from './churn.js';
import { envoyHasApplied, recordSnapshots, TEST_IDP_ID } from './portcullis.js';
import { freePort, freePortPair } from './ports.js';
import { SIGN_IN } from './sign-in-config.js';
import { waitFor } from './wait.js';

/** The load's session: CHURN_USER, valid for an hour, from the test IdP client. */
export function churnSession(): Session {
  return {
    id: 'session-churn',
    userId: 'user-ada',
    email: CHURN_USER,
    emailVerified: true,
    name: 'Ada',
    groups: [],
    claims: { email: CHURN_USER },
    issuedAt: Date.now(),
    expiresAt: Date.now() + 3_600_000,
    idpId: TEST_IDP_ID,
  };
}

/**
 * Two self-signed certificates for `churn.test` names that share one key, so replacing the
 * certificate file is one atomic rename (a key and certificate replaced one after the other would
 * give a reload between them a mismatched pair). Written with openssl into `dir`.
 */
export function twoCertificates(dir: string): { keyFile: string; certPems: readonly [string, string] } {
  const keyFile = join(dir, 'key.pem');
  execFileSync('openssl', [
    'genpkey',
    '-algorithm',
    'EC',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-out',
    keyFile,
  ]);
  const cert = (serial: string): string => {
    const out = join(dir, `cert-${serial}.pem`);
    execFileSync('openssl', [
      'req',
      '-x509',
      '-key',
      keyFile,
      '-days',
      '1',
      '-set_serial',
      serial,
      '-subj',
      `/CN=churn-${serial}.test`,
      '-addext',
      'subjectAltName=DNS:*.churn.test',
      '-out',
      out,
    ]);
    return readFileSync(out, 'utf8');
  };
  return { keyFile, certPems: [cert('1'), cert('2')] };
}

/** SHA-256 fingerprint of a PEM certificate, as `X509Certificate.fingerprint256` gives it. */
export function fingerprintOf(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}

/** The fingerprint of the certificate a fresh TLS connection to 127.0.0.1:`port` is shown. */
export function servedFingerprint(port: number, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => {
      const fingerprint = socket.getPeerX509Certificate()?.fingerprint256 ?? '';
      socket.destroy();
      resolve(fingerprint);
    });
    socket.setTimeout(5000, () => socket.destroy(new Error('TLS handshake timed out')));
    socket.on('error', reject);
  });
}

/** The reloader's counters: successful reloads and rejected ones. */
export interface ReloadCounts {
  readonly reloads: number;
  readonly failures: number;
}

/** A Portcullis all-in-one (its real Envoy) whose whole config the churn test writes. */
export interface ChurnPortcullis {
  readonly running: AllInOne;
  readonly proxyPort: number;
  readonly adminUrl: string;
  readonly dir: string;
  readonly logs: LogRecord[];
  /** Writes `routes` (with the fixed settings) to a temp file and renames it over the config. */
  writeRoutes(routes: readonly Record<string, unknown>[]): void;
  /** The reload counters now, to pass to `waitLive` after the next write. */
  reloadCounts(): ReloadCounts;
  /**
   * Resolves once a reload after `before` succeeded and Envoy has applied the store's snapshot
   * (`envoyHasApplied`); a rejected reload fails it (after its bound, with the problems).
   */
  waitLive(before: ReloadCounts, what: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts all-in-one with `routes` on free loopback ports; `settings` are more top-level options
 * (a certificate, say). Resolves once Envoy has applied the first config.
 */
export async function startChurnPortcullis(
  routes: readonly Record<string, unknown>[],
  options: {
    readonly adsApiType: 'DELTA_GRPC' | 'GRPC';
    readonly dir: string;
    readonly settings?: Readonly<Record<string, unknown>>;
  },
): Promise<ChurnPortcullis> {
  const configPath = join(options.dir, 'config.yaml');
  const [proxyPort, grpcPort, adminPort] = [await freePort(), await freePortPair(), await freePort()];
  const fixed = {
    ...SIGN_IN,
    insecure_server: true,
    ...options.settings,
    address: `127.0.0.1:${proxyPort}`,
    grpc_address: `127.0.0.1:${grpcPort}`,
    envoy_admin_address: `127.0.0.1:${adminPort}`,
    log_level: 'info',
  };
  const writeRoutes = (next: readonly Record<string, unknown>[]): void => {
    const temp = `${configPath}.tmp`;
    writeFileSync(temp, stringify({ ...fixed, routes: next }));
    renameSync(temp, configPath);
  };
  writeRoutes(routes);
  const logger = recordingLogger();
  const running = await startAllInOne({
    configPath,
    env: {},
    logger,
    adsApiType: options.adsApiType,
    reloadSettleMs: 20,
  });
  recordSnapshots(running.store);
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const harness: ChurnPortcullis = {
    running,
    proxyPort,
    adminUrl,
    dir: options.dir,
    logs: logger.records,
    writeRoutes,
    reloadCounts: () => {
      const { reloads, failures } = running.reloader.current();
      return { reloads, failures };
    },
    async waitLive(before, what) {
      await waitFor(
        async () => {
          const stats = running.reloader.current();
          if (stats.failures > before.failures)
            throw new Error(`a reload was rejected: ${JSON.stringify(stats.lastProblems)}`);
          return stats.reloads > before.reloads && (await envoyHasApplied(adminUrl, running));
        },
        { what: `Envoy to apply ${what}`, timeoutMs: 15_000, intervalMs: 5 },
      );
    },
    stop: () => running.stop(),
  };
  try {
    await harness.waitLive({ reloads: 0, failures: 0 }, 'the first config');
  } catch (err) {
    await running.stop();
    throw err;
  }
  return harness;
}

/** A temp directory for one churn run; `rm` removes it. */
export function churnDir(): { readonly path: string; rm(): void } {
  const path = mkdtempSync(join(tmpdir(), 'portcullis-churn-'));
  return { path, rm: () => rmSync(path, { recursive: true, force: true }) };
}
