/**
 * What the watcher has seen of the cluster, and the config it asks for: the inputs of one build
 * as plain data, so turning them into a document is a pure function the watcher calls on every
 * change: the settings document, with the routes of Ingresses and HTTPRoutes (route-source.ts)
 * after its own. The watcher only fills the state.
 */
import type { Problem } from '../shared/errors.js';
import { SETTINGS_KIND, SETTINGS_OBJECT_NAME, SETTINGS_PLURAL, SETTINGS_GROUP } from './crd-schema.js';
import { settingsDocument, type SettingsDocument } from './settings-document.js';
import { secretText, type SecretData, type SecretName } from './secret-refs.js';
import type { ObjectProblem } from './object-problems.js';
import type { DocumentOrigins } from './route-provenance.js';
import { kubernetesRoutes, withKubernetesRoutes, type RouteSourceInput } from './route-source.js';
import { setOwn } from '../shared/own-property.js';

/** The route source's objects as the watcher last listed them (Secrets come from `secrets`). */
export type RouteObjects = Omit<RouteSourceInput, 'secrets'>;

/** The part of an object's metadata the watcher reads. */
export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly generation?: number;
  readonly resourceVersion?: string;
}

/** The Portcullis settings object as the API server returns it (spec not trusted). */
export interface SettingsObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta;
  readonly spec?: unknown;
  readonly status?: unknown;
}

/** A Secret as the API server returns it: `data` values are base64. */
export interface SecretObject {
  readonly metadata?: ObjectMeta;
  readonly data?: Readonly<Record<string, string>>;
}

/** The cluster as the watcher last saw it. */
export interface ClusterState {
  /** The object `global`; undefined while it does not exist. */
  readonly settings: SettingsObject | undefined;
  /** Each Secret the settings name, by `ns/name` (secretText): undefined when it does not exist. */
  readonly secrets: ReadonlyMap<string, SecretObject | undefined>;
  /** Where references without a namespace look. */
  readonly namespace: string;
  /** The route source's objects; undefined: no routes are read. */
  readonly routes?: RouteObjects;
}

/** The config the cluster asks for: a document to build, or why there is none. */
export interface DesiredConfig {
  /** The settings object's generation this was read from (undefined: no object). */
  readonly generation: number | undefined;
  /** The document to build (no routes yet), or undefined when the object is missing. */
  readonly document: Record<string, unknown> | undefined;
  /** Problems with the objects themselves (at `spec.<field>`): the document must not be built. */
  readonly problems: readonly Problem[];
  /** Every Secret the settings and the routes name (what the watcher follows). */
  readonly secrets: readonly SecretName[];
  /** validate's problems with the document, named by field (SettingsDocument.fieldProblems). */
  readonly fieldProblems: (problems: readonly Problem[]) => Problem[];
  /**
   * Problems in route objects (a bad annotation, a missing Service or Secret): not built as is;
   * the watcher replaces each such object by its last accepted version or leaves it out
   * (last-accepted.ts) and asks again.
   */
  readonly routeProblems: readonly ObjectProblem[];
  /** Paths left out by rule (an older object serves them); the build goes on. */
  readonly skipped: readonly ObjectProblem[];
  /** Where each route and certificate of `document` comes from (attributeProblems). */
  readonly origins: DocumentOrigins | undefined;
}

/** The settings object's full name in messages: `Portcullis global` (portcullises.portcullis.dev). */
export const SETTINGS_OBJECT_TEXT = `${SETTINGS_KIND} ${SETTINGS_OBJECT_NAME}`;

/** The CRD that must be installed, by name. */
export const SETTINGS_CRD_NAME = `${SETTINGS_PLURAL}.${SETTINGS_GROUP}`;

/** A Secret's `data` decoded (base64 -> bytes); the values stay bytes and are never logged. */
export function secretData(secret: SecretObject): SecretData {
  const data: Record<string, Uint8Array> = {};
  // setOwn: a Secret key `__proto__` (a valid key) is kept as a key, not made the prototype.
  for (const [key, value] of Object.entries(secret.data ?? {}))
    setOwn(data, key, Buffer.from(value, 'base64'));
  return data;
}

/**
 * The config `state` asks for (see DesiredConfig). A missing settings object is a problem, not
 * an empty config: with nothing to serve the last good config keeps serving.
 */
export function desiredConfig(state: ClusterState): DesiredConfig {
  const settings = state.settings;
  if (settings === undefined) {
    return {
      generation: undefined,
      document: undefined,
      problems: [
        {
          path: '',
          message: `the ${SETTINGS_OBJECT_TEXT} object does not exist; create it (kind ${SETTINGS_KIND}, apiVersion ${SETTINGS_GROUP}/v1alpha1, name ${SETTINGS_OBJECT_NAME})`,
        },
      ],
      secrets: [],
      fieldProblems: (problems) => [...problems],
      routeProblems: [],
      skipped: [],
      origins: undefined,
    };
  }
  const readSecret = (name: SecretName): SecretData | undefined => {
    const secret = state.secrets.get(secretText(name));
    return secret === undefined ? undefined : secretData(secret);
  };
  const read: SettingsDocument = settingsDocument({
    spec: settings.spec,
    namespace: state.namespace,
    readSecret,
  });
  const desired = {
    generation: settings.metadata?.generation,
    document: read.document,
    problems: read.problems,
    secrets: read.secrets,
    fieldProblems: read.fieldProblems,
    routeProblems: [],
    skipped: [],
    origins: undefined,
  };
  if (state.routes === undefined || read.document === undefined) return desired;
  // The routes' TLS Secrets are the ones they ask for: each read is also a Secret to follow.
  const routeSecrets = new Map<string, SecretName>();
  const routes = kubernetesRoutes({
    ...state.routes,
    secrets: (name) => {
      routeSecrets.set(secretText(name), { namespace: name.namespace, name: name.name });
      return readSecret(name);
    },
  });
  const merged = withKubernetesRoutes(read.document, routes);
  return {
    ...desired,
    document: merged.document,
    secrets: [...read.secrets, ...routeSecrets.values()],
    routeProblems: routes.problems,
    skipped: routes.skipped,
    origins: merged.origins,
  };
}
