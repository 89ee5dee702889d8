/**
 * Secret references in the settings resource (`{name, namespace?, key?}`) and the values read
 * through them. The Secrets themselves come from an injected reader, so this stays pure and the
 * watcher decides how Secrets are fetched. Messages name the field, the Secret (`ns/name`) and
 * the data key, never a value.
 */
import type { Problem } from '../shared/errors.js';
import { isPlainObject } from '../config/value-readers.js';

/** A Secret by namespace and name. */
export interface SecretName {
  readonly namespace: string;
  readonly name: string;
}

/** A Secret's data, key to the decoded bytes (what `.data` holds after base64). */
export type SecretData = Readonly<Record<string, Uint8Array>>;

/** Reads a Secret's data; undefined when no such Secret exists. Injected (see module doc). */
export type ReadSecret = (secret: SecretName) => SecretData | undefined;

/** A validated reference: the Secret and, for single-value references, the data key. */
export interface SecretRef extends SecretName {
  readonly key?: string;
}

/** `ns/name`, as messages name a Secret. */
export function secretText(secret: SecretName): string {
  return `${secret.namespace}/${secret.name}`;
}

/**
 * Collects problems and the Secrets read, and reads references and values for settings-document.ts.
 * One per object read: it holds that read's state, never module state.
 */
export class SecretReads {
  readonly problems: Problem[] = [];
  /** Every Secret a reference named, once each (what a watcher must watch). */
  readonly named: SecretName[] = [];

  constructor(
    private readonly readSecret: ReadSecret,
    private readonly defaultNamespace: string,
  ) {}

  problem(path: string, message: string): undefined {
    this.problems.push({ path, message });
    return undefined;
  }

  /**
   * The reference at `path` (under `spec`), or undefined with a problem. `withKey` allows a
   * `key` (a single-value reference); a string in place of a reference is refused in words,
   * since it is most likely a secret value written inline.
   */
  ref(path: string, value: unknown, withKey: boolean): SecretRef | undefined {
    const shape = withKey ? '{name, namespace, key}' : '{name, namespace}';
    if (!isPlainObject(value)) {
      const inline =
        typeof value === 'string' ? '; secret values are never written in the Portcullis object' : '';
      return this.problem(path, `must name a Secret as ${shape}${inline}`);
    }
    const allowed = withKey ? ['name', 'namespace', 'key'] : ['name', 'namespace'];
    let bad = false;
    for (const extra of Object.keys(value).filter((name) => !allowed.includes(name))) {
      bad = true;
      this.problem(`${path}.${extra}`, `unknown field; a Secret reference is ${shape}`);
    }
    const name = this.text(`${path}.name`, value.name, true);
    const namespace = this.text(`${path}.namespace`, value.namespace, false);
    const key = withKey ? this.text(`${path}.key`, value.key, false) : undefined;
    if (bad || name === undefined || name === null || namespace === null || key === null) return undefined;
    const secret = { namespace: namespace ?? this.defaultNamespace, name };
    if (!this.named.some((seen) => secretText(seen) === secretText(secret))) this.named.push(secret);
    return key === undefined ? secret : { ...secret, key };
  }

  /** A non-empty string field of a reference: undefined when absent, null (with a problem) when bad. */
  private text(path: string, value: unknown, required: boolean): string | undefined | null {
    if (value === undefined && !required) return undefined;
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
    this.problem(path, value === undefined ? 'is required' : 'must be a non-empty string');
    return null;
  }

  /** The Secret's data, or undefined with a problem at `path` when it does not exist. */
  data(path: string, secret: SecretName): SecretData | undefined {
    const data = this.readSecret({ namespace: secret.namespace, name: secret.name });
    if (data === undefined) return this.problem(path, `Secret ${secretText(secret)} not found`);
    return data;
  }

  /**
   * One data key as text, trimmed like a `*_file` option's content (`kubectl create secret
   * --from-file` keeps the file's trailing newline). Undefined with a problem when it is not
   * UTF-8 or empty; `required` also makes a missing key a problem.
   */
  value(
    path: string,
    secret: SecretName,
    data: SecretData,
    key: string,
    required: boolean,
  ): string | undefined {
    const bytes = Object.hasOwn(data, key) ? data[key] : undefined;
    const where = `key ${key} of Secret ${secretText(secret)}`;
    if (bytes === undefined)
      return required ? this.problem(path, `Secret ${secretText(secret)} has no key ${key}`) : undefined;
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return this.problem(path, `${where} is not UTF-8 text`);
    }
    return text.trim() === '' ? this.problem(path, `${where} is empty`) : text.trim();
  }
}
