import {
  CoreV1Api,
  CustomObjectsApi,
  NetworkingV1Api,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { Problem } from '../../shared/errors.js';
import { formatProblem } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { canonicalJson } from '../../shared/canonical-json.js';
import { parseConfig } from '../../config/parse-config.js';
import { SETTINGS_GROUP, SETTINGS_OBJECT_NAME, SETTINGS_PLURAL, SETTINGS_VERSION } from '../crd-schema.js';
import {
  desiredConfig,
  SETTINGS_OBJECT_TEXT,
  type ClusterState,
  type DesiredConfig,
  type SettingsObject,
} from '../cluster-state.js';
import { refuseFileRead } from '../settings-document.js';
import { envOverrides, overrideMessage } from '../env-overrides.js';
import type { SettingsVerdict } from '../settings-status.js';
import { Debouncer, type DebounceTimes } from '../debounce.js';
import { FollowedList } from './followed-list.js';
import { SecretWatch } from './secret-watch.js';
import { StatusWriter } from './status-writer.js';
import { RouteLists } from './route-lists.js';
import { RouteEvents } from './route-events.js';
import { IngressStatus } from './ingress-status.js';
import { GatewayStatusWriter } from './gateway-status-writer.js';
import { attributeProblems } from '../route-source.js';
import { rememberingCertificateNames } from '../tls-secrets.js';
import { nextHostOwners } from '../host-claims.js';
import { hostOwnersRecord, type RecordedOwner } from '../host-owners.js';
import { formatObjectProblem, type ObjectProblem } from '../object-problems.js';
import {
  acceptedAfter,
  acceptedSecretNames,
  fateText,
  liveInputs,
  refKey,
  type AcceptedObjects,
  type ObjectFate,
} from '../last-accepted.js';
import { isolationRounds } from '../isolation-rounds.js';

/** A document and the environment it is read with, as the reload loop takes it. */
export interface SourceDocument {
  readonly document: Record<string, unknown>;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** What a build of one document gave: in force, or refused with validate's problems (key paths). */
export interface BuildOutcome {
  readonly ok: boolean;
  readonly problems: readonly Problem[];
}

/** What SettingsSource needs. */
export interface SettingsSourceOptions {
  readonly kubeConfig: KubeConfig;
  /** Where Secret references without a namespace look. */
  readonly namespace: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** This replica (status field manager, Event reporter). */
  readonly identity: string;
  readonly logger: Logger;
  /** Builds a document through the reload loop and says how it went. */
  readonly apply: (document: SourceDocument) => Promise<BuildOutcome>;
  /** Whether this replica writes status (the Lease holder). */
  readonly isLeader: () => boolean;
  readonly debounce?: DebounceTimes;
  readonly resyncMs?: number;
  /** Whether routes are read from Ingresses and HTTPRoutes (default true). */
  readonly routes?: boolean;
  /** The address written to our Ingresses' status (undefined: status is not written). */
  readonly publishAddress?: string;
}

/** How many refused documents a source remembers (see `SettingsSource.refused`). */
const REFUSED_KEPT = 8;

/** The settings object's collection, narrowed to the one object read. */
const SETTINGS_PATH = `/apis/${SETTINGS_GROUP}/${SETTINGS_VERSION}/${SETTINGS_PLURAL}`;
const SETTINGS_SELECTOR = `metadata.name=${SETTINGS_OBJECT_NAME}`;

/**
 * The settings resource as a config source: lists and watches the Portcullis object `global` and
 * the Secrets it names (SecretWatch: those only), and on every change (debounced: a burst is one
 * build) turns the cluster state into a document (cluster-state.ts, pure) and hands it to the
 * reload loop (`apply`). A settings object with problems of its own (a missing Secret) is not
 * built: the last good config keeps serving, and its problems plus validate's (run here on the
 * document, for the whole list) are the verdict. A route object with problems does not hold the
 * others back: its last accepted version serves in its place, or it is left out when it has none
 * (last-accepted.ts), and the problem is logged and written as an Event. Each verdict goes to the object's status and, when refused, an
 * Event, written by the Lease holder only (`isLeader`); a new holder writes the last verdict at
 * once (`leadershipChanged`).
 */
export class SettingsSource {
  private readonly settings: FollowedList<KubernetesObject>;
  private readonly secrets: SecretWatch;
  private readonly status: StatusWriter;
  private readonly routes: RouteLists | undefined;
  private readonly routeEvents: RouteEvents;
  private readonly ingressStatus: IngressStatus | undefined;
  private readonly gatewayStatus: GatewayStatusWriter;
  private readonly debouncer: Debouncer;
  /** The last document built (canonical JSON) and its outcome: an unchanged one is not rebuilt. */
  private built: { readonly key: string; readonly outcome: BuildOutcome } | undefined;
  /**
   * Documents lately refused (canonical JSON) and their outcomes, a few at most: while an object
   * stays bad, every pass builds its refused document first and then the one with the object
   * replaced; remembering the refusal spares the reload loop building it again each time.
   */
  private readonly refused = new Map<string, BuildOutcome>();
  private verdict: SettingsVerdict | undefined;
  /** Whether some config is in force (a refused change then keeps it). */
  private serving = false;
  /** Each route object's version in the last config in force (last-accepted.ts). */
  private accepted: AcceptedObjects = new Map();
  /** The environment overrides last warned of: each is logged once, not at every rebuild. */
  private warnedOverrides = new Set<string>();
  /** The passes, one after another (the first runs from `start`, later ones from the debouncer). */
  /** Certificates' server names, remembered across builds (host ownership reads them each build). */
  private readonly certificateNames = rememberingCertificateNames();
  private passes: Promise<void> = Promise.resolve();
  /** Each host's owner for this pass: the recorded ones carried over the live claims (host-claims.ts). */
  private hostOwners: ReadonlyMap<string, RecordedOwner> = new Map();

  constructor(private readonly options: SettingsSourceOptions) {
    const custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
    const core = options.kubeConfig.makeApiClient(CoreV1Api);
    const onChange = (): void => this.debouncer.changed();
    const resync = options.resyncMs === undefined ? {} : { resyncMs: options.resyncMs };
    this.settings = new FollowedList<KubernetesObject>({
      kubeConfig: options.kubeConfig,
      path: SETTINGS_PATH,
      list: () =>
        custom.listClusterCustomObject({
          group: SETTINGS_GROUP,
          version: SETTINGS_VERSION,
          plural: SETTINGS_PLURAL,
          fieldSelector: SETTINGS_SELECTOR,
        }),
      fieldSelector: SETTINGS_SELECTOR,
      what: SETTINGS_OBJECT_TEXT,
      onChange,
      logger: options.logger,
      ...resync,
    });
    this.secrets = new SecretWatch({
      kubeConfig: options.kubeConfig,
      core,
      logger: options.logger,
      onChange,
      ...resync,
    });
    this.status = new StatusWriter({ custom, core, identity: options.identity, logger: options.logger });
    this.routes =
      options.routes === false
        ? undefined
        : new RouteLists({ kubeConfig: options.kubeConfig, logger: options.logger, onChange, ...resync });
    this.routeEvents = new RouteEvents({ core, identity: options.identity, logger: options.logger });
    this.ingressStatus =
      options.publishAddress === undefined
        ? undefined
        : new IngressStatus({
            networking: options.kubeConfig.makeApiClient(NetworkingV1Api),
            address: options.publishAddress,
            identity: options.identity,
            logger: options.logger,
          });
    this.gatewayStatus = new GatewayStatusWriter({
      custom,
      address: options.publishAddress,
      identity: options.identity,
      logger: options.logger,
    });
    this.debouncer = new Debouncer(
      () => this.evaluate(),
      // 50 ms of quiet still makes one build of a `kubectl apply` burst (its events arrive
      // milliseconds apart) while a lone change waits little longer than a file rename does.
      options.debounce ?? { quietMs: 50, maxWaitMs: 2000 },
    );
  }

  /**
   * Lists the object and its Secrets and makes the first build; then every change builds again.
   * Returns the first outcome (a missing or refused object is not an error here: it waits).
   */
  async start(): Promise<void> {
    await Promise.all([this.settings.start(), this.routes?.start()]);
    await this.evaluate();
  }

  /** The Lease changed hands: a new holder writes the last verdict now. */
  leadershipChanged(leading: boolean): void {
    if (leading) this.debouncer.changed();
  }

  /** The last verdict (tests, logs). */
  current(): SettingsVerdict | undefined {
    return this.verdict;
  }

  async stop(): Promise<void> {
    this.debouncer.close();
    await this.debouncer.idle();
    await this.settings.stop();
    await this.routes?.stop();
    await this.secrets.stop();
  }

  /** Queues one pass (see `pass`); passes never overlap. */
  private evaluate(): Promise<void> {
    const next = this.passes.then(() => this.pass());
    this.passes = next.catch(() => undefined);
    return next;
  }

  /**
   * One pass: read the state, build when it asks for something new, report the verdict. Problems
   * in route objects do not stop the build: each such object is replaced by its last accepted
   * version or left out (last-accepted.ts) and the rest is built, in as many rounds as that takes
   * (isolation-rounds.ts; route problems no round can set aside become a settings problem). A
   * problem in the settings keeps the last good config.
   */
  private async pass(): Promise<void> {
    if (!this.settings.synced() || (this.routes !== undefined && !this.routes.synced())) return;
    const object = this.settings.objects()[0] as SettingsObject | undefined;
    if (this.routes !== undefined) this.hostOwners = nextHostOwners(object?.status, this.routes.objects());
    // The Secrets to follow come from the object, the routes and the routes' last accepted
    // versions (which may stand in for them); once followed (listed), read it again.
    await this.secrets.follow([
      ...desiredConfig(this.state(object)).secrets,
      ...acceptedSecretNames(this.accepted),
    ]);
    const { unknown } = this.secrets.current();
    if (unknown.length > 0) {
      this.options.logger.warn({ secrets: unknown }, 'waiting for Secrets that could not be read');
      return;
    }
    let state = this.state(object);
    let desired = desiredConfig(state);
    const live = state.routes;
    const rounds = await isolationRounds(
      live === undefined ? undefined : liveInputs(live, state.secrets),
      this.accepted,
      async (next, found) => {
        // The first round's inputs are the live state `desired` was made from.
        if (next !== undefined && next.routes !== live) {
          state = { ...state, routes: next.routes, secrets: next.secrets };
          desired = desiredConfig(state);
        }
        return desired.document === undefined
          ? { problems: desired.problems, ok: false }
          : await this.outcome(desired, found);
      },
    );
    const { built, inputs, routeProblems, unresolved } = rounds;
    const problems = unresolved === undefined ? built.problems : [...built.problems, unresolved];
    if (built.ok && state.routes !== undefined && live !== undefined)
      this.accepted = acceptedAfter(state.routes, state.secrets, live, this.accepted);
    const fates = inputs?.fates ?? new Map<string, ObjectFate>();
    const kept = this.serving ? 'the last good config keeps serving' : 'nothing is served yet';
    await this.reportRoutes(routeProblems, desired.skipped, (problem) => {
      if (!built.ok) return kept;
      return desired.skipped.includes(problem)
        ? /(^|\.)tls\b|certificateRefs/.test(problem.where ?? '')
          ? "the certificate stays served after the owner namespace's own"
          : 'its other paths serve'
        : fateText(fates.get(refKey(problem.object)));
    });
    this.verdict = { generation: desired.generation, problems, serving: this.serving };
    if (this.routes !== undefined)
      this.verdict = { ...this.verdict, hostOwners: hostOwnersRecord(this.hostOwners) };
    if (problems.length > 0) {
      this.options.logger.error(
        {
          object: SETTINGS_OBJECT_TEXT,
          generation: desired.generation,
          problems: problems.map(formatProblem),
        },
        `the ${SETTINGS_OBJECT_TEXT} settings are refused; ${this.serving ? 'the last good config keeps serving' : 'nothing is served yet'}`,
      );
    }
    if (object !== undefined && this.options.isLeader()) await this.status.write(object, this.verdict);
  }

  /**
   * Builds `desired` unless it has problems: the settings' own (then not built) or its build's,
   * named by field, are `problems`; `ok` says whether it is in force. Problems in route objects
   * (found before the build, or validate's attributed to an object) go to `routeProblems`: the
   * caller replaces or leaves out those objects and builds again; nothing is published here.
   */
  private async outcome(
    desired: DesiredConfig,
    routeProblems: ObjectProblem[],
  ): Promise<{ readonly problems: readonly Problem[]; readonly ok: boolean }> {
    const document = desired.document ?? {};
    if (desired.problems.length > 0) {
      // Not built (a value is missing), but validated here so status lists every problem at once.
      const parsed = parseConfig({ document, env: this.options.env, readText: refuseFileRead });
      return { problems: [...desired.problems, ...desired.fieldProblems(parsed.problems)], ok: false };
    }
    if (desired.routeProblems.length > 0) {
      routeProblems.push(...desired.routeProblems);
      return { problems: [], ok: false };
    }
    this.warnOverrides(document);
    const key = canonicalJson(document);
    let outcome = this.built?.key === key ? this.built.outcome : this.refused.get(key);
    if (outcome === undefined) {
      outcome = await this.options.apply({ document, env: this.options.env });
      this.built = { key, outcome };
      if (!outcome.ok) this.rememberRefused(key, outcome);
    }
    if (outcome.ok) this.serving = true;
    if (outcome.ok) return { problems: [], ok: true };
    if (desired.origins === undefined)
      return { problems: desired.fieldProblems(outcome.problems), ok: false };
    const attributed = attributeProblems(outcome.problems, desired.origins);
    routeProblems.push(...attributed.objects);
    return { problems: desired.fieldProblems(attributed.global), ok: false };
  }

  /** Remembers a refused document's outcome, forgetting the oldest past REFUSED_KEPT. */
  private rememberRefused(key: string, outcome: BuildOutcome): void {
    this.refused.delete(key);
    this.refused.set(key, outcome);
    for (const oldest of this.refused.keys()) {
      if (this.refused.size <= REFUSED_KEPT) break;
      this.refused.delete(oldest);
    }
  }

  /**
   * Logs a warning for each option the environment sets over the object's field to another value
   * (envOverrides), once while it lasts. Log only: the status schema has no warnings to put it in.
   */
  private warnOverrides(document: Readonly<Record<string, unknown>>): void {
    const now = new Set<string>();
    for (const override of envOverrides(document, this.options.env)) {
      const message = overrideMessage(override);
      now.add(message);
      if (this.warnedOverrides.has(message)) continue;
      this.options.logger.warn(
        { option: override.option, env: override.envVar, field: override.field },
        message,
      );
    }
    this.warnedOverrides = now;
  }

  /**
   * Logs the route objects' problems and, from the Lease holder, writes them as Events, each with
   * `outcomeOf` it (what serves in its place), the publish address into our Ingresses' status, and
   * the Gateway API status (GatewayStatusWriter).
   */
  private async reportRoutes(
    problems: readonly ObjectProblem[],
    skipped: readonly ObjectProblem[],
    outcomeOf: (problem: ObjectProblem) => string,
  ): Promise<void> {
    if (this.routes === undefined) return;
    const all = [...problems, ...skipped];
    if (problems.length > 0) {
      this.options.logger.error(
        { problems: problems.map((problem) => `${formatObjectProblem(problem)}; ${outcomeOf(problem)}`) },
        'routes refused',
      );
    }
    if (skipped.length > 0)
      this.options.logger.warn({ problems: skipped.map(formatObjectProblem) }, 'route paths left out');
    if (!this.options.isLeader()) return;
    const objects = this.routes.objects();
    await this.routeEvents.report(all, objects, outcomeOf);
    if (this.serving) await this.ingressStatus?.write(objects.ingressClasses, objects.ingresses);
    await this.gatewayStatus.write(objects, problems, skipped, this.serving);
  }

  private state(object: SettingsObject | undefined): ClusterState {
    return {
      settings: object,
      secrets: this.secrets.current().secrets,
      namespace: this.options.namespace,
      ...(this.routes === undefined
        ? {}
        : {
            routes: {
              ...this.routes.objects(),
              certificateNames: this.certificateNames,
              hostOwners: this.hostOwners,
            },
          }),
    };
  }
}
