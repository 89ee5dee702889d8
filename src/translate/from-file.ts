import { randomBytes } from 'node:crypto';
import { errorMessage, type Problem } from '../shared/errors.js';
import { loadConfigFile, type LoadResult } from '../config/load-file.js';
import { loadConfigDocument, type DocumentInput } from '../config/load-document.js';
import type { RouteCache } from '../config/parse-config.js';
import type { Config } from '../config/types.js';
import { identityProviders } from '../config/identity-provider.js';
import type { IR } from '../ir/types.js';
import type { IRAddress } from '../ir/services.js';
import { buildKeyRing, type KeyRing, type KeySecrets } from '../keys/key-ring.js';
import { jwksOf } from '../keys/signing-key.js';
import type { DerivedTls } from '../pki/derived-tls.js';
import { internalEndpoints } from './internal-endpoints.js';
import { translateProcess } from './services.js';
import { translate, type TranslateOptions } from './translate.js';
import type { RoutesMemo } from './reuse.js';

/** What a build takes from outside the config file. */
export interface TranslateExternals {
  /** PEM bundle of the system trust store (pki/system-ca.ts). */
  readonly systemCaFile: string;
  /**
   * The secrets used where the config sets none (all-in-one without `shared_secret` or
   * `cookie_secret`): a long-running process generates them once and passes them to every build,
   * so keys stay across reloads. Absent: fresh random ones for this pass (one-shot commands, tests).
   */
  readonly generatedSecrets?: { readonly sharedSecret: Buffer; readonly cookieSecret: Buffer };
  /** What the first build fixed for the life of the process; absent on the first build. */
  readonly pinned?: PinnedAtStart;
}

/**
 * What a process keeps from its first build, because Envoy's bootstrap carries it or its listeners
 * are bound: where its own HTTP endpoints listen, and the derived internal TLS.
 */
export interface PinnedAtStart {
  readonly ownHttp: IRAddress;
  readonly internalTls: DerivedTls | undefined;
}

/**
 * A config document pushed by a config source other than a file (the Kubernetes settings
 * resource): the same object a config file parses to (snake_case keys, typed values), and the
 * environment it is read with. Plain data, so it crosses to the build worker as it is.
 */
export type PushedDocument = DocumentInput;

/** The config file to read: its path, the environment, and bytes the caller already read. */
export interface FileInput {
  readonly configPath: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Bytes the caller already read (absolute path -> bytes): parsed instead of read again. */
  readonly read?: ReadonlyMap<string, Buffer>;
  /**
   * A document a config source pushed, read instead of the file (and with its own environment):
   * `configPath` then only names the source in messages.
   */
  readonly pushed?: PushedDocument;
}

/** The config of `input`: the pushed document when there is one, else the file. */
function loadInput(input: FileInput, previousRoutes?: RouteCache): LoadResult {
  return input.pushed === undefined
    ? loadConfigFile(input.configPath, input.env, input.read, previousRoutes)
    : loadConfigDocument(input.pushed, previousRoutes);
}

/**
 * What one pass hands to the next (the caller keeps it, inside its last good build): the validated
 * routes by content, the key ring, and the translated routes, hosts and clusters (reuse.ts).
 * Opaque to the caller; it holds one pass's entries only.
 */
export interface TranslateMemo {
  readonly routeCache: RouteCache;
  readonly keys: KeyRing;
  readonly routes: RoutesMemo;
}

/** How much work parse and translate did in one pass: the routes they did not take from the memo. */
export interface FileWork {
  readonly routesValidated: number;
  readonly routesTranslated: number;
}

/** What parse and translate made of a file: the IR and key ring, or the stage that failed and why. */
export type FileOutcome =
  | {
      readonly ok: true;
      readonly ir: IR;
      readonly keys: KeyRing;
      readonly memo: TranslateMemo;
      readonly work: FileWork;
      readonly warnings: readonly Problem[];
      readonly filesRead: readonly string[];
    }
  | {
      readonly ok: false;
      readonly stage: 'parse' | 'translate';
      readonly problems: readonly Problem[];
      readonly warnings: readonly Problem[];
      readonly filesRead: readonly string[];
    };

/**
 * config file + env -parse-> Config -translate-> IR and key ring: the one place after parse where
 * the config is read, so the services see only the IR and the keys. A generator that pauses once,
 * between parse and translate, so the caller can time each stage and give the event loop a turn.
 * `previous` is the last good pass's memo: unchanged routes are not validated or translated again
 * (and keep their IR objects) and unchanged secrets keep their derived keys (same result either way).
 */
export function* translateFile(
  input: FileInput,
  externals: TranslateExternals,
  previous?: TranslateMemo,
): Generator<undefined, FileOutcome, void> {
  const { config, problems, warnings, filesRead, routeCache, routesValidated } = loadInput(
    input,
    previous?.routeCache,
  );
  if (config === undefined) return { ok: false, stage: 'parse', problems, warnings, filesRead };
  yield;
  const failed = (found: readonly Problem[]): FileOutcome => ({
    ok: false,
    stage: 'translate',
    problems: found,
    warnings,
    filesRead,
  });
  try {
    const keys = buildKeyRing(keySecrets(config, externals.generatedSecrets), previous?.keys);
    const translated = translate(config, translateOptions(config, keys, externals), previous?.routes);
    if (translated.ir === undefined || translated.memo === undefined) return failed(translated.problems);
    return {
      ok: true,
      ir: translated.ir,
      keys,
      memo: { routeCache, keys, routes: translated.memo },
      work: { routesValidated, routesTranslated: translated.routesTranslated },
      warnings,
      filesRead,
    };
  } catch (err) {
    return failed([{ path: '', message: errorMessage(err) }]);
  }
}

/** `translateFile` run to its end without pausing. */
export function translateFileNow(
  input: FileInput,
  externals: TranslateExternals,
  previous?: TranslateMemo,
): FileOutcome {
  const pass = translateFile(input, externals, previous);
  for (;;) {
    const step = pass.next();
    if (step.done === true) return step.value;
  }
}

/**
 * Parses the file and builds its key ring only (no routes are translated): for the commands that
 * print a key (`grpc-credential`, `internal-ca`). Secrets the config does not set are generated for
 * this call and marked so in `keys.generated`.
 */
export function keysOfFile(
  input: FileInput,
):
  | { readonly keys: KeyRing; readonly problems: readonly [] }
  | { readonly keys: undefined; readonly problems: readonly Problem[] } {
  const { config, problems } = loadInput(input);
  if (config === undefined) return { keys: undefined, problems };
  try {
    return { keys: buildKeyRing(keySecrets(config, undefined)), problems: [] };
  } catch (err) {
    return { keys: undefined, problems: [{ path: '', message: errorMessage(err) }] };
  }
}

/** The config's secrets as the key ring takes them, the process's generated ones where it sets none. */
function keySecrets(config: Config, generatedSecrets: TranslateExternals['generatedSecrets']): KeySecrets {
  const generated = generatedSecrets ?? {
    sharedSecret: randomBytes(32),
    cookieSecret: randomBytes(32),
  };
  const shared = config.shared_secret?.reveal();
  const cookie = config.cookie_secret?.reveal();
  return {
    sharedSecret: shared ?? generated.sharedSecret,
    cookieSecret: cookie ?? generated.cookieSecret,
    generated: { sharedSecret: shared === undefined, cookieSecret: cookie === undefined },
    signingKeyPems: config.signing_key?.blocks,
    tlsDerive: config.tls_derive,
    idpClientSecrets: new Map(identityProviders(config).map((idp) => [idp.id, idp.clientSecret])),
    metricsBasicAuth: config.metrics_basic_auth,
    databrokerConnection: config.databroker_storage_connection_string,
  };
}

/**
 * Translate's inputs from outside the config: where Envoy reaches Portcullis (with the derived TLS
 * and the address pinned at start), the JWKS, the fallback certificate and the system CA bundle.
 * The build and the dry run (`portcullis compile`) both come here, so the dry run prints what
 * Envoy receives.
 */
function translateOptions(config: Config, keys: KeyRing, externals: TranslateExternals): TranslateOptions {
  const pinned = externals.pinned;
  const tls = pinned === undefined ? keys.internalTls : pinned.internalTls;
  return {
    systemCaFile: externals.systemCaFile,
    fallbackCertificate: keys.fallbackCertificate,
    internal: internalEndpoints(config, {
      jwksJson: keys.jwksJson,
      decisionJwksJson: JSON.stringify(jwksOf([keys.decisionKey])),
      ownHttp: pinned?.ownHttp ?? translateProcess(config).ownHttp,
      ...(tls === undefined ? {} : { tls: { caPem: tls.caPem, serverName: tls.serverName } }),
    }),
  };
}
