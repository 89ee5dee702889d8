/**
 * Per-route options as annotations under `portcullis.dev/`, derived from the route option table:
 * `portcullis.dev/<route key>` for every route key an Ingress or HTTPRoute author may set, and a
 * table of the route keys that are not annotations, each with why. A test keeps the two tables
 * covering the whole route option table, so a new route option is a deliberate choice here.
 *
 * Values are text (annotations are strings): booleans are `"true"` or `"false"`; strings and
 * durations are taken as written; lists (`allowed_users`, `allowed_domains`, ...) are a YAML list
 * (`["a@example.com", "b@example.com"]` or a block list), or one item without a comma; maps
 * (`set_request_headers`), `policy` and every other structured option (`allowed_idp_claims`,
 * `health_checks`, `rewrite_response_headers`, ...) are YAML, parsed by the same YAML reader and limits as a config file. The
 * values then go into the route entry as if written in a file, so parseConfig validates them with
 * the same messages, and its problems map back to the annotation (route-provenance.ts).
 */
import { parseSource } from '../config/formats.js';
import { ROUTE_OPTIONS, type RouteOptionType } from '../config/route-option-table.js';
import { closestKey, isPlainObject } from '../config/value-readers.js';
import { parseHeaderValue } from '../config/header-templates.js';
import { annotationWhere, type ObjectProblem, type ObjectRef } from './object-problems.js';

/** The prefix of every Portcullis annotation. */
export const ANNOTATION_PREFIX = 'portcullis.dev/';

/** Route keys that are not annotations, with why (shown in docs/kubernetes.md and its test). */
export const NOT_ANNOTATIONS: Readonly<Record<string, string>> = {
  from: "the Ingress rule's host or the HTTPRoute's hostnames",
  to: "the backend Service's ready EndpointSlice addresses",
  redirect: 'an HTTPRoute RequestRedirect filter is the Kubernetes way; an Ingress path always has a backend',
  response: 'an Ingress path always has a backend',
  name: 'derived from the object, host and path, so an annotation change renames nothing',
  prefix: 'the path with pathType Prefix (or PathPrefix)',
  path: 'the path with pathType Exact',
  regex: 'an HTTPRoute RegularExpression path match',
  allow_restricted_upstream:
    "a cluster operator's decision, not an object author's: an EndpointSlice may name any address",
  tls_custom_ca_file: "a path on the controller's file system, which object authors must not read",
  tls_client_cert_file: "a path on the controller's file system, which object authors must not read",
  tls_client_key_file: "a path on the controller's file system, which object authors must not read",
  tls_client_cert: 'goes with tls_client_key, a secret that must not be written in an annotation',
  tls_client_key: 'a secret: annotations are readable by anyone who can read the object',
  idp_client_id: 'goes with idp_client_secret, a secret that must not be written in an annotation',
  idp_client_secret: 'a secret: annotations are readable by anyone who can read the object',
};

/**
 * `portcullis.dev/*` annotations that are not route options but tell the controller something
 * about the object (read where that decision is made, never copied into a route), with what each
 * does. readAnnotations passes over them, so they are neither unknown nor route keys.
 */
export const CONTROLLER_ANNOTATIONS: Readonly<Record<string, string>> = {
  [`${ANNOTATION_PREFIX}allowed_namespaces`]:
    'on an Ingress or HTTPRoute in the namespace that owns a host: the other namespaces (comma-separated names, or `*`) whose Ingresses and HTTPRoutes may add paths on the hosts it claims (host-ownership.ts)',
};

/** One annotation: its full name, the route key it sets and how its text is read. */
export interface AnnotationSpec {
  readonly annotation: string;
  readonly key: string;
  readonly type: RouteOptionType;
  readonly doc: string;
}

/** Every `portcullis.dev/*` annotation, in route option table order. */
export const ANNOTATIONS: readonly AnnotationSpec[] = ROUTE_OPTIONS.filter(
  (option) => NOT_ANNOTATIONS[option.key] === undefined,
).map((option) => ({
  annotation: `${ANNOTATION_PREFIX}${option.key}`,
  key: option.key,
  type: option.type,
  doc: option.doc,
}));

const BY_NAME = new Map(ANNOTATIONS.map((spec) => [spec.annotation, spec]));
const ANNOTATION_NAMES = ANNOTATIONS.map((spec) => spec.annotation);

/** The route options one object's annotations set, and which annotation set each key. */
export interface AnnotatedOptions {
  /** Route key -> value, as a config file would hold it. */
  readonly values: Readonly<Record<string, unknown>>;
  /** Route key -> `annotation portcullis.dev/<key>`, for mapping problems back. */
  readonly sources: Readonly<Record<string, string>>;
  readonly problems: readonly ObjectProblem[];
}

/**
 * Reads the `portcullis.dev/*` annotations of `object`. Unknown names under the prefix are
 * problems with a did-you-mean hint (a misspelled `portcullis.dev/policy` would otherwise leave a
 * route open to every signed-in user); a key that is deliberately not an annotation says why.
 */
export function readAnnotations(
  object: ObjectRef,
  annotations: Readonly<Record<string, string>> | undefined,
): AnnotatedOptions {
  const values: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  const problems: ObjectProblem[] = [];
  for (const [name, text] of Object.entries(annotations ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!name.startsWith(ANNOTATION_PREFIX) || CONTROLLER_ANNOTATIONS[name] !== undefined) continue;
    const where = annotationWhere(name);
    const spec = BY_NAME.get(name);
    if (spec === undefined) {
      problems.push({ object, where, message: unknownMessage(name) });
      continue;
    }
    const read = readValue(spec.type, text);
    if ('error' in read) {
      problems.push({ object, where, message: read.error });
      continue;
    }
    const token = spec.key === 'set_request_headers' ? tokenHeader(read.value) : undefined;
    if (token !== undefined) {
      problems.push({ object, where, message: tokenHeaderMessage(token) });
      continue;
    }
    values[spec.key] = read.value;
    sources[spec.key] = where;
  }
  return { values, sources, problems };
}

/**
 * The first header of `headers` whose value names the user's `${portcullis.access_token}` or
 * `${portcullis.id_token}`, if any. From an annotation or an HTTPRoute filter, such a value would
 * let anyone who may write the object send every visitor's identity-provider tokens to a backend
 * of their choosing: handing tokens out is the operator's decision, made in the config file.
 * Claims (`${portcullis.claims.<name>}`) go upstream as identity headers already may, so they pass.
 */
export function tokenHeader(headers: unknown): string | undefined {
  if (!isPlainObject(headers)) return undefined;
  return Object.entries(headers).find(([, text]) => {
    if (typeof text !== 'string') return false;
    const parsed = parseHeaderValue(text);
    return (
      parsed.error === undefined &&
      parsed.parts.some((part) => part.kind === 'access_token' || part.kind === 'id_token')
    );
  })?.[0];
}

/** The message for a header `name` that would send tokens upstream (see tokenHeader). */
export function tokenHeaderMessage(name: string): string {
  return `${name}: sends the signed-in user's identity-provider token upstream, which a Kubernetes object may not do (anyone who can write it would receive every visitor's tokens); give such a route in the config file`;
}

function unknownMessage(name: string): string {
  const key = name.slice(ANNOTATION_PREFIX.length);
  const why = NOT_ANNOTATIONS[key];
  if (why !== undefined) return `${key} is not set by an annotation: ${why}`;
  const hint = closestKey(name, [...ANNOTATION_NAMES, ...Object.keys(CONTROLLER_ANNOTATIONS)]);
  return `unknown Portcullis annotation${hint === undefined ? '; remove it' : ` (did you mean ${hint}?)`}`;
}

type Read = { readonly value: unknown } | { readonly error: string };

/** The value an annotation's text stands for, by the route option's type. */
/**
 * The value an annotation's text stands for, by the route option's type: text for the scalar
 * types, YAML for every structured one (so a structured type added to the table is YAML too).
 */
function readValue(type: RouteOptionType, text: string): Read {
  switch (type) {
    case 'bool':
      if (text === 'true' || text === 'false') return { value: text === 'true' };
      return { error: `expected "true" or "false", got ${JSON.stringify(text)}` };
    case 'string_list':
      return readList(text);
    case 'string':
    case 'duration':
    case 'lb_policy':
    case 'url':
    case 'to':
    case 'secret':
      return { value: text };
    default:
      return readYaml(text);
  }
}

function readYaml(text: string): Read {
  const parsed = parseSource(text, 'yaml');
  if ('error' in parsed) return { error: `not valid YAML: ${parsed.error}` };
  return { value: parsed.document };
}

/**
 * A YAML list, or one item. A scalar with a comma is refused rather than guessed at: `a.com, b.com`
 * as one item would match nobody, and split by hand it would be a second list syntax.
 */
function readList(text: string): Read {
  const parsed = readYaml(text);
  if ('error' in parsed) return parsed;
  const value = parsed.value;
  if (Array.isArray(value)) return { value };
  if (isPlainObject(value) || value === null || value === undefined)
    return { error: 'expected a YAML list such as ["a@example.com", "b@example.com"], or one item' };
  if (typeof value === 'string' && value.includes(','))
    return {
      error: `expected a YAML list: write [${value
        .split(',')
        .map((item) => JSON.stringify(item.trim()))
        .join(', ')}]`,
    };
  return { value: [value] };
}
