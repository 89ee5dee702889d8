/**
 * Portcullis's own Prometheus series, with `prom-client`: one `Registry` per process
 * (never the library's global default), so two processes started in one test runner, or a stop and
 * a start, never share or collide on a series. Every series carries the `service` label of the
 * process (`portcullis`, or `portcullis-<services>` when split), set once the first config says
 * which services run (`setService`).
 *
 * Series:
 * - `portcullis_xds_pushes_total`, `portcullis_xds_acks_total`, `portcullis_xds_nacks_total`
 *   {type_url}: responses the ADS server sent and the ACKs and NACKs Envoy answered them with, read
 *   from the ADS server's own counters at each scrape (`watchAds`);
 * - `portcullis_config_reloads_total` {outcome: success|failure},
 *   `portcullis_config_reload_duration_seconds`, and `portcullis_config_info` {checksum} 1: the
 *   snapshot version (a checksum of its content) of the config serving now (`reloaded`);
 * - `portcullis_authz_decisions_total` {outcome} and `portcullis_authz_decision_duration_seconds`;
 * - `portcullis_sign_ins_total` {outcome}, `portcullis_session_refreshes_total` {outcome},
 *   `portcullis_sign_outs_total`, `portcullis_session_store_errors_total` {operation};
 * - `portcullis_envoy_stats_up`: whether the last scrape reached Envoy's admin (`envoyStatsUp`);
 * - Node's process metrics (`collectDefaultMetrics`, started by `collectProcessMetrics`).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DecisionOutcome, Telemetry } from '../../contract/telemetry.js';
import { RESOURCE_TYPES, SHORT_NAMES, typeUrl } from '../../proto/type-urls.js';
import type { AdsStats } from '../../xds/server/metrics.js';
import type { ReloadResult } from '../../runtime/subscribers.js';

/** Decision latency buckets (seconds): a Check answered from memory takes well under a millisecond. */
const DECISION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const DECISION_OUTCOMES: readonly DecisionOutcome[] = [
  'allow',
  'sign_in',
  'unauthenticated',
  'deny',
  'not_found',
  'unavailable',
  'error',
];
/** Reload duration buckets (seconds): from a small config to a very large one. */
const RELOAD_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The registry and series of one Portcullis process. It is the process's `Telemetry` (the services
 * report through it), and the composition root feeds it reloads (`reloaded`) and the ADS server
 * (`watchAds`). Recording is a counter increment: cheap and never throws.
 */
export class PortcullisMetrics implements Telemetry {
  readonly registry = new Registry();
  private readonly decisions: Counter<'outcome'>;
  private readonly decisionSeconds: Histogram;
  private readonly signIns: Counter<'outcome'>;
  private readonly refreshes: Counter<'outcome'>;
  private readonly signOuts: Counter;
  private readonly storeErrors: Counter<'operation'>;
  private readonly reloads: Counter<'outcome'>;
  private readonly reloadSeconds: Histogram;
  private readonly configInfo: Gauge<'checksum'>;
  private readonly envoyUp: Gauge;
  private processMetrics = false;

  constructor() {
    const registers = [this.registry];
    this.decisions = new Counter({
      name: 'portcullis_authz_decisions_total',
      help: 'ext_authz Checks answered, by outcome (allow, sign_in, unauthenticated, deny, not_found, unavailable, error).',
      labelNames: ['outcome'],
      registers,
    });
    this.decisionSeconds = new Histogram({
      name: 'portcullis_authz_decision_duration_seconds',
      help: 'Time Portcullis took to decide one ext_authz Check.',
      buckets: DECISION_BUCKETS,
      registers,
    });
    this.signIns = new Counter({
      name: 'portcullis_sign_ins_total',
      help: 'Sign-ins that ended at the IdP callback, by outcome (success: a session was made).',
      labelNames: ['outcome'],
      registers,
    });
    this.refreshes = new Counter({
      name: 'portcullis_session_refreshes_total',
      help: 'Session token refreshes, by outcome (refreshed; ended: the IdP refused; kept: it was unavailable or another instance refreshes).',
      labelNames: ['outcome'],
      registers,
    });
    this.signOuts = new Counter({
      name: 'portcullis_sign_outs_total',
      help: 'Sessions ended by sign-out.',
      registers,
    });
    this.storeErrors = new Counter({
      name: 'portcullis_session_store_errors_total',
      help: 'Session store calls that failed because the store was unreachable, by operation.',
      labelNames: ['operation'],
      registers,
    });
    this.reloads = new Counter({
      name: 'portcullis_config_reloads_total',
      help: 'Config loads (the first one and every reload), by outcome (success, failure: invalid, or NACKed by Envoy; the last good config kept serving).',
      labelNames: ['outcome'],
      registers,
    });
    this.reloadSeconds = new Histogram({
      name: 'portcullis_config_reload_duration_seconds',
      help: "Time one config load took, from reading the file to Envoy's verdict on its snapshot (or rejecting it).",
      buckets: RELOAD_BUCKETS,
      registers,
    });
    this.configInfo = new Gauge({
      name: 'portcullis_config_info',
      help: 'The config serving now: its checksum (the xDS snapshot version, a hash of its content) as a label, value 1.',
      labelNames: ['checksum'],
      registers,
    });
    this.envoyUp = new Gauge({
      name: 'portcullis_envoy_stats_up',
      help: "1 when the last scrape read Envoy's own stats from its admin interface (appended as envoy_*), 0 when it could not.",
      registers,
    });
    // Known label values start at 0, so a series exists (and rates work) before its first event.
    for (const outcome of DECISION_OUTCOMES) this.decisions.inc({ outcome }, 0);
    for (const outcome of ['success', 'failure']) this.signIns.inc({ outcome }, 0);
    for (const outcome of ['refreshed', 'ended', 'kept']) this.refreshes.inc({ outcome }, 0);
    for (const operation of ['get', 'put', 'delete']) this.storeErrors.inc({ operation }, 0);
    for (const outcome of ['success', 'failure']) this.reloads.inc({ outcome }, 0);
  }

  /** Labels every series with `service` (the process's log label: `portcullis` all-in-one). */
  setService(service: string): void {
    this.registry.setDefaultLabels({ service });
  }

  /**
   * Adds Node's process metrics (CPU, memory, event loop lag, GC, handles; prom-client's
   * `collectDefaultMetrics`) to the registry, once. Only a process that serves `/metrics` calls it:
   * the event-loop and GC observers it installs are not free.
   */
  collectProcessMetrics(): void {
    if (this.processMetrics) return;
    this.processMetrics = true;
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Reads the xDS counters from `stats` (the ADS server's `stats()`) at each scrape: responses
   * sent (pushes), ACKs and NACKs per type URL. Call once, with the process's ADS server.
   */
  watchAds(stats: () => AdsStats): void {
    const series = [
      ['portcullis_xds_pushes_total', 'xDS responses sent to Envoy, by type URL.', 'responsesSent'],
      ['portcullis_xds_acks_total', 'xDS responses Envoy ACKed, by type URL.', 'acks'],
      ['portcullis_xds_nacks_total', 'xDS responses Envoy NACKed (rejected), by type URL.', 'nacks'],
    ] as const;
    for (const [name, help, field] of series) {
      new Counter({
        name,
        help,
        labelNames: ['type_url'],
        registers: [this.registry],
        collect() {
          const counts = stats()[field];
          this.reset();
          for (const type of RESOURCE_TYPES) this.inc({ type_url: typeUrl(type) }, counts[SHORT_NAMES[type]]);
        },
      });
    }
  }

  /** Records one finished config load (`Reloader`'s `onReload`): outcome, duration, active checksum. */
  reloaded(result: ReloadResult, seconds: number): void {
    this.reloads.inc({ outcome: result.ok ? 'success' : 'failure' });
    this.reloadSeconds.observe(seconds);
    if (!result.ok) return;
    this.configInfo.reset();
    this.configInfo.set({ checksum: result.snapshot.version }, 1);
  }

  /** Records whether this scrape reached Envoy's admin. */
  envoyStatsUp(up: boolean): void {
    this.envoyUp.set(up ? 1 : 0);
  }

  decision(outcome: DecisionOutcome, seconds: number): void {
    this.decisions.inc({ outcome });
    this.decisionSeconds.observe(seconds);
  }

  signIn(outcome: 'success' | 'failure'): void {
    this.signIns.inc({ outcome });
  }

  refresh(outcome: 'refreshed' | 'ended' | 'kept'): void {
    this.refreshes.inc({ outcome });
  }

  signOut(): void {
    this.signOuts.inc();
  }

  storeError(operation: string): void {
    this.storeErrors.inc({ operation });
  }
}
