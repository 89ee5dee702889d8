import { formatProblem, type Problem } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { FailedBuild } from './build-pipeline.js';
import type { EnvoyVerdict } from '../xds/publish/envoy-verdict.js';
import type { NewlyPublic } from './exposure.js';
import type { PublishedBuild } from './subscribers.js';

/**
 * Logs at warn, one line per path, each protected path a reload made public (`newlyPublic`, found
 * where the build ran: the build worker, or this thread): a reload that opens a path is
 * deliberate or a mistake, never silent.
 */
export function logNewlyPublic(logger: Logger, found: readonly NewlyPublic[]): void {
  for (const opened of found) {
    logger.warn(
      { hosts: opened.hosts, path: opened.path, was: opened.was, now: opened.now },
      `config reload makes a protected path public: ${opened.hosts.join(',')} ${opened.path} (was route ${opened.was}, now answered by public route ${opened.now})`,
    );
  }
}

/** What `logVerdict` reports of one published build. */
interface Outcome {
  readonly changed: boolean;
  readonly publishMs: number;
  /** Envoy's verdict, or undefined when none was asked (no xDS here, or nothing changed). */
  readonly verdict: EnvoyVerdict | undefined;
  /** How the build crossed from the build worker; undefined when it was built in this thread. */
  readonly delta?: DeltaStats | undefined;
}

/** How a build crossed from the build worker: in how many chunks, how long, the longest chunk's apply time. */
export interface DeltaStats {
  readonly chunks: number;
  readonly longestApplyMs: number;
  /** From the first chunk's arrival to the build put together (ms, the event loop free between chunks). */
  readonly receiveMs: number;
}

/** The reload log line of a build that was published and not rejected. */
export function logVerdict(logger: Logger, result: PublishedBuild, outcome: Outcome): void {
  const { changed, publishMs, verdict, delta } = outcome;
  const fields = {
    version: result.snapshot.version,
    routes: result.ir.process.routeCount,
    changed,
    ms: {
      ...result.timingsMs,
      publish: publishMs,
      ...(delta === undefined ? {} : { receive: delta.receiveMs, longestChunk: delta.longestApplyMs }),
    },
    ...(delta === undefined ? {} : { chunks: delta.chunks }),
    work: result.work,
    ...(verdict === undefined ? {} : { envoy: verdict.kind }),
  };
  if (verdict?.kind === 'superseded') {
    logger.info(fields, 'config reloaded; a newer config replaced it before Envoy confirmed it');
  } else if (verdict?.kind === 'unconfirmed') {
    logger.warn(
      { ...fields, waitingFor: verdict.waitingFor },
      `config reloaded; ${verdict.waitingFor} Envoy(s) neither took nor rejected it within ${verdict.afterMs} ms (it stays in force)`,
    );
  } else {
    logger.info(fields, changed ? 'config reloaded' : 'config reloaded, no change');
  }
}

/** The failed build standing for `result` once Envoy rejected it (stage `envoy`, Envoy's error_detail). */
export function rejectedBuild(
  result: PublishedBuild,
  verdict: Extract<EnvoyVerdict, { kind: 'rejected' }>,
): FailedBuild {
  return {
    ok: false,
    stage: 'envoy',
    problems: [
      {
        path: '',
        message: `Envoy ${verdict.nodeId === '' ? '' : `(node ${verdict.nodeId}) `}rejected the ${verdict.type} of version ${result.snapshot.version}: ${verdict.errorDetail}`,
      },
    ],
    warnings: result.warnings,
    filesRead: result.filesRead,
  };
}

/** The reload log line of a refused build (every problem with its path) and the version kept. */
export function logRejected(
  logger: Logger,
  source: string,
  result: FailedBuild,
  keeping: string | undefined,
): void {
  logger.error(
    { config: source, stage: result.stage, problems: result.problems.map(formatProblem), keeping },
    'config reload rejected; the last good config keeps serving',
  );
}

/** One warn line per warning of a build, with its key path and line. */
export function logWarnings(logger: Logger, warnings: readonly Problem[]): void {
  for (const warning of warnings)
    logger.warn({ key: warning.path, line: warning.line }, formatProblem(warning));
}
