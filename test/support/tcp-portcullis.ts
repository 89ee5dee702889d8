/**
 * Portcullis all-in-one serving TLS on its listener, for the TCP-route tests: the listener port is
 * chosen before the config is written (the authenticate URL and the IdP's redirect URI carry it),
 * with one self-signed certificate naming every `*.localhost` host the test uses (Node's
 * certificate check refuses a `*.localhost` wildcard: a wildcard directly under a TLD).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startAllInOne, type AllInOne } from '../../src/cmd/all-in-one.js';
import { adminRequest } from '../../src/envoy/admin.js';
import { recordingLogger, type LogRecord } from '../../src/shared/logger.js';
import { envoyHasApplied, recordSnapshots } from './portcullis.js';
import { freePort, freePortPair } from './ports.js';
import { waitFor } from './wait.js';
import { generateTestCertificate, type TestCertificate } from './test-certs.js';

/** A running TLS Portcullis for the TCP-route tests. */
export interface TlsPortcullis {
  readonly running: AllInOne;
  /** Envoy's HTTPS listener on 127.0.0.1. */
  readonly port: number;
  readonly adminUrl: string;
  readonly dir: string;
  /** Self-signed for every name (also its own CA for the client's `--ca-cert`). */
  readonly certificate: TestCertificate;
  readonly logs: LogRecord[];
  stop(): Promise<void>;
}

/**
 * Starts all-in-one on free loopback ports with TLS (a certificate for `names`), the settings
 * `build(port)` returns for the listener port, and waits until Envoy is LIVE with them applied.
 */
export async function startTlsPortcullis(
  names: readonly string[],
  build: (port: number) => Record<string, unknown>,
): Promise<TlsPortcullis> {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-tcp-'));
  const certificate = generateTestCertificate(names[0] ?? 'portcullis.test', names);
  const [port, grpcPort, adminPort] = [await freePort(), await freePortPair(), await freePort()];
  const configPath = join(dir, 'config.yaml');
  writeFileSync(
    configPath,
    stringify({
      log_level: 'info',
      proxy_log_level: 'warn',
      ...build(port),
      insecure_server: false,
      certificate_file: certificate.certFile,
      certificate_key_file: certificate.keyFile,
      address: `127.0.0.1:${port}`,
      grpc_address: `127.0.0.1:${grpcPort}`,
      envoy_admin_address: `127.0.0.1:${adminPort}`,
    }),
  );
  const logger = recordingLogger();
  const running = await startAllInOne({
    configPath,
    env: {},
    logger,
    adsApiType: 'DELTA_GRPC',
    reloadSettleMs: 20,
  });
  recordSnapshots(running.store);
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const stop = async (): Promise<void> => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => (await adminRequest(adminUrl, '/ready', { timeoutMs: 1000 })).body.trim() === 'LIVE',
      { what: 'Envoy to report LIVE', timeoutMs: 30_000 },
    );
    await waitFor(() => envoyHasApplied(adminUrl, running), {
      what: 'Envoy to apply the config',
      timeoutMs: 15_000,
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { running, port, adminUrl, dir, certificate, logs: logger.records, stop };
}
