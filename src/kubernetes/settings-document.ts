/**
 * The Portcullis settings object (its spec, and the Secrets it names) -> the config document a
 * file would give (snake_case keys, typed values, no routes), for the same parseConfig a file
 * reload runs. Pure: Secrets come from an injected reader. Problems found here (a missing
 * Secret or key, an unknown field) name the field (`spec.identityProvider.secret`) and the
 * Secret (`ns/name`); `toField` turns validate's problems about the document (`idp_provider`)
 * into the same terms (`spec.identityProvider.provider`), so status names what the user wrote.
 * `identityProviders` (named providers, each with the `identityProvider` fields and its own
 * client Secret) becomes `identity_providers`, mapped back the same way.
 * Secret values never appear in a problem.
 */
import type { Problem } from '../shared/errors.js';
import { closestKey, isPlainObject } from '../config/value-readers.js';
import { below, fieldProblem, type Origin } from './settings-problems.js';
import { SecretReads, secretText, type ReadSecret, type SecretName } from './secret-refs.js';
import { setOwn } from '../shared/own-property.js';
import { entryKeyOf, specFields, TLS_CERT_KEY, TLS_KEY_KEY, type SpecField } from './spec-fields.js';

/** What settingsDocument reads. */
export interface SettingsInput {
  /** The object's `spec` as the API server returned it (not trusted to match the CRD). */
  readonly spec: unknown;
  /** The namespace Portcullis runs in: where a reference without a namespace looks. */
  readonly namespace: string;
  readonly readSecret: ReadSecret;
}

/** The document, this stage's problems, and how validate's problems map back to fields. */
export interface SettingsDocument {
  /** The config document (no `routes`: routes come from Ingress and HTTPRoute objects). */
  readonly document: Record<string, unknown>;
  /** Problems with the object itself, each at `spec.<field>`. */
  readonly problems: readonly Problem[];
  /** Every Secret the object names, whether or not it exists (what to watch). */
  readonly secrets: readonly SecretName[];
  /** A problem parseConfig found in `document`, named by the field it came from. */
  readonly toField: (problem: Problem) => Problem;
  /**
   * parseConfig's problems with `document` by field (toField), without those about an option
   * whose value `problems` already says could not be read (a missing Secret or key): "is
   * required" after "Secret x has no key y" repeats the same fault less clearly.
   */
  readonly fieldProblems: (problems: readonly Problem[]) => Problem[];
}

/** A tree of the spec's known names: a field (null) or a group of fields. */
type NameTree = Map<string, NameTree | null>;

function nameTree(fields: readonly SpecField[]): NameTree {
  const root: NameTree = new Map();
  for (const field of fields) {
    const parts = field.path.split('.');
    const leaf = parts.pop() ?? field.path;
    let node = root;
    for (const part of parts) {
      const child = node.get(part) ?? new Map();
      node.set(part, child);
      node = child;
    }
    node.set(leaf, null);
  }
  return root;
}

/**
 * Unknown names are errors with a did-you-mean, as unknown keys in a file are: an API server
 * with an older CRD, or a client that skips validation, must not make a typo a silent default.
 */
function checkNames(reads: SecretReads, value: Record<string, unknown>, tree: NameTree, at: string): void {
  for (const [name, child] of Object.entries(value)) {
    if (child === undefined) continue;
    const path = `${at}.${name}`;
    const known = tree.get(name);
    if (known === undefined) {
      const hint = closestKey(name, [...tree.keys()]);
      reads.problem(path, `unknown field${hint === undefined ? '' : ` (did you mean ${hint}?)`}`);
    } else if (known !== null) {
      if (isPlainObject(child)) checkNames(reads, child, known, path);
      else reads.problem(path, `must be a map of ${[...known.keys()].join(', ')}`);
    }
  }
}

/** The value at a dotted path under `spec`; undefined where any part is missing. */
function valueAt(spec: Record<string, unknown>, path: string): unknown {
  let node: unknown = spec;
  for (const part of path.split('.')) {
    if (!isPlainObject(node) || !Object.hasOwn(node, part)) return undefined;
    node = node[part];
  }
  return node;
}

/** Builds the config document from one Portcullis object (see the module doc). */
export function settingsDocument(input: SettingsInput): SettingsDocument {
  const reads = new SecretReads(input.readSecret, input.namespace);
  const document: Record<string, unknown> = {};
  const origins = new Map<string, Origin>();
  const unread = new Set<string>();
  const spec = input.spec ?? {};
  const fields = specFields();
  if (!isPlainObject(spec)) {
    reads.problem('spec', 'must be a map of settings');
  } else {
    checkNames(reads, spec, nameTree(fields), 'spec');
    for (const field of fields) {
      const value = valueAt(spec, field.path);
      if (value !== undefined) readField(reads, field, value, { document, origins, unread });
    }
  }
  return {
    document,
    problems: reads.problems,
    secrets: reads.named,
    toField: (problem) => fieldProblem(problem, origins),
    fieldProblems: (problems) =>
      problems
        .filter((problem) => ![...unread].some((key) => below(problem.path, key)))
        .map((problem) => fieldProblem(problem, origins)),
  };
}

/** Where readField writes: the document, and where each value came from. */
interface Output {
  readonly document: Record<string, unknown>;
  readonly origins: Map<string, Origin>;
  /** Options whose Secret could not be read (the problem is already reported). */
  readonly unread: Set<string>;
  /** Every key of a shared Secret is required (a named provider's client), not only some. */
  readonly sharedKeysRequired?: boolean;
}

function readField(reads: SecretReads, field: SpecField, value: unknown, out: Output): void {
  const at = `spec.${field.path}`;
  switch (field.form) {
    case 'value':
      if (field.option.kind.type === 'certificates') readTlsSecrets(reads, at, value, out);
      else out.document[field.option.key] = value;
      return;
    case 'secret_key': {
      out.unread.add(field.option.key);
      const ref = reads.ref(at, value, true);
      const data = ref === undefined ? undefined : reads.data(at, ref);
      if (ref === undefined || data === undefined) return;
      const key = ref.key ?? field.key;
      const text = reads.value(at, ref, data, key, true);
      if (text === undefined) return;
      out.unread.delete(field.option.key);
      out.document[field.option.key] = text;
      out.origins.set(field.option.key, { field: at, note: `key ${key} of Secret ${secretText(ref)}` });
      return;
    }
    case 'shared_secret': {
      const ref = reads.ref(at, value, false);
      const data = ref === undefined ? undefined : reads.data(at, ref);
      for (const { option, key } of field.keys) {
        if (ref === undefined || data === undefined) {
          out.unread.add(option.key);
          continue;
        }
        const before = reads.problems.length;
        const text = reads.value(at, ref, data, key, out.sharedKeysRequired === true);
        if (reads.problems.length > before) out.unread.add(option.key);
        if (text === undefined) continue;
        out.document[option.key] = text;
        out.origins.set(option.key, { field: at, note: `key ${key} of Secret ${secretText(ref)}` });
      }
      return;
    }
    case 'secret_map':
      readSecretMap(reads, field, value, out);
      return;
    case 'provider_map':
      readProviders(reads, field, value, out);
      return;
  }
}

/**
 * `identityProviders` -> `identity_providers`: each provider's fields read as the global
 * provider's are (into the options they give), then renamed to the entry's keys, with their
 * origins and unread options under `identity_providers.<name>.`. A provider's client is
 * required (a named provider is complete on its own), so a missing `secret` or key is named
 * here and validate's "is required" for it is dropped. Provider names are validate's to check.
 */
function readProviders(
  reads: SecretReads,
  field: Extract<SpecField, { form: 'provider_map' }>,
  value: unknown,
  out: Output,
): void {
  const at = `spec.${field.path}`;
  if (!isPlainObject(value)) {
    reads.problem(at, 'must be a map of provider name to its settings');
    return;
  }
  const names: NameTree = new Map(field.entry.map((inner) => [inner.path, null]));
  const providers: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(value)) {
    const entryAt = `${at}.${name}`;
    if (!isPlainObject(entry)) {
      reads.problem(entryAt, `must be a map of ${[...names.keys()].join(', ')}`);
      continue;
    }
    checkNames(reads, entry, names, entryAt);
    const own: Output = { document: {}, origins: new Map(), unread: new Set(), sharedKeysRequired: true };
    for (const inner of field.entry) {
      const path = `${field.path}.${name}.${inner.path}`;
      if (entry[inner.path] !== undefined) {
        readField(reads, { ...inner, path }, entry[inner.path], own);
      } else if (inner.form === 'shared_secret' || inner.form === 'secret_key') {
        const keys = inner.form === 'shared_secret' ? inner.keys : [{ option: inner.option, key: inner.key }];
        reads.problem(
          `spec.${path}`,
          `is required: the Secret with this provider's ${keys.map((one) => one.key).join(' and ')}`,
        );
        for (const one of keys) own.unread.add(one.option.key);
      }
    }
    const prefix = `${field.option.key}.${name}`;
    const rename = (key: string): string => {
      const dot = key.indexOf('.');
      const option = dot < 0 ? key : key.slice(0, dot);
      return `${prefix}.${entryKeyOf(option) ?? option}${dot < 0 ? '' : key.slice(dot)}`;
    };
    // Not `providers[name] = `: a provider named `__proto__` would set the prototype and vanish
    // rather than reach validate (which refuses the name, naming the field).
    setOwn(
      providers,
      name,
      Object.fromEntries(Object.entries(own.document).map(([key, text]) => [entryKeyOf(key) ?? key, text])),
    );
    for (const [key, origin] of own.origins) out.origins.set(rename(key), origin);
    for (const key of own.unread) out.unread.add(rename(key));
  }
  out.document[field.option.key] = providers;
}

/** Adds each entry of the named Secret to the map option; a name set in both places is refused. */
function readSecretMap(
  reads: SecretReads,
  field: Extract<SpecField, { form: 'secret_map' }>,
  value: unknown,
  out: Output,
): void {
  const at = `spec.${field.path}`;
  const ref = reads.ref(at, value, false);
  const data = ref === undefined ? undefined : reads.data(at, ref);
  if (ref === undefined || data === undefined) return;
  const key = field.option.key;
  const inline = out.document[key] ?? {};
  // A wrong type in the inline map is parseConfig's to report; merging would hide it.
  if (!isPlainObject(inline)) return;
  const merged: Record<string, unknown> = { ...inline };
  for (const name of Object.keys(data)) {
    if (Object.hasOwn(inline, name)) {
      reads.problem(at, `key ${name} of Secret ${secretText(ref)} is also set inline; keep one`);
      continue;
    }
    const text = reads.value(at, ref, data, name, true);
    if (text === undefined) continue;
    setOwn(merged, name, text);
    out.origins.set(`${key}.${name}`, { field: at, note: `key ${name} of Secret ${secretText(ref)}` });
  }
  out.document[key] = merged;
}

/**
 * `certificates`: TLS Secrets -> `{cert, key}` PEM pairs. A value that does not look like PEM
 * is refused here: parseConfig would take it for a file path and name it in its message.
 */
function readTlsSecrets(reads: SecretReads, at: string, value: unknown, out: Output): void {
  const before = reads.problems.length;
  readTlsPairs(reads, at, value, out);
  // "No certificate is configured" after "Secret x not found" repeats the same fault.
  if (reads.problems.length > before) out.unread.add('certificate');
}

function readTlsPairs(reads: SecretReads, at: string, value: unknown, out: Output): void {
  if (!Array.isArray(value)) {
    reads.problem(at, 'must be a list of TLS Secrets, each {name, namespace}');
    return;
  }
  const pairs: { cert: string; key: string }[] = [];
  value.forEach((entry, index) => {
    const path = `${at}[${index}]`;
    const ref = reads.ref(path, entry, false);
    const data = ref === undefined ? undefined : reads.data(path, ref);
    if (ref === undefined || data === undefined) return;
    const cert = reads.value(path, ref, data, TLS_CERT_KEY, true);
    const key = reads.value(path, ref, data, TLS_KEY_KEY, true);
    if (cert === undefined || key === undefined) return;
    const notPem = [
      [TLS_CERT_KEY, cert],
      [TLS_KEY_KEY, key],
    ].filter(([, text]) => !text?.includes('-----BEGIN '));
    for (const [name] of notPem) reads.problem(path, `key ${name} of Secret ${secretText(ref)} is not PEM`);
    if (notPem.length > 0) return;
    const place = `certificates[${pairs.length}]`;
    for (const [part, name] of [
      ['cert', TLS_CERT_KEY],
      ['key', TLS_KEY_KEY],
    ] as const) {
      out.origins.set(`${place}.${part}`, { field: path, note: `key ${name} of Secret ${secretText(ref)}` });
    }
    pairs.push({ cert, key });
  });
  out.document.certificates = pairs;
}

/**
 * The `readText` to parse a settings document with: the document names no files (no `*_file`
 * fields exist, TLS values are checked to be PEM), so a read would be a bug; it is refused
 * rather than letting an object read the controller's own files.
 */
export function refuseFileRead(): string {
  throw Object.assign(new Error('a settings document reads no files'), { code: 'EACCES' });
}
