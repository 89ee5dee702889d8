/**
 * Each global option's container-orchestration field: where it sits in the spec of the
 * Kubernetes settings resource (kind Portcullis), so the option table drives the CRD, the docs
 * and the mapping of validate's key paths back to fields. The rule: the row's `field` when it
 * has one (grouped names such as `identityProvider.url`, or the Secret the value comes from),
 * else the camelCase of the key. Secret options never take an inline value: they name a Secret.
 * `identity_providers` is a map of named providers, each given by the global provider's fields.
 * Options that make no sense in an orchestrated setting are left out, each with its reason.
 */
import { GLOBAL_OPTIONS, type OptionSpec } from './option-table.js';

/** How one option is given in the settings resource. */
export type OrchestrationField =
  /** `spec.<path>` holds the value itself. */
  | { readonly form: 'value'; readonly path: string }
  /**
   * `spec.<path>` names a Secret (`{name, namespace?}`) whose data key `key` holds the value.
   * `shared` when several options read keys of that one Secret: then the keys are fixed;
   * otherwise the reference may name another key (`{name, key}`).
   */
  | { readonly form: 'secret'; readonly path: string; readonly key: string; readonly shared: boolean }
  /**
   * `spec.<path>` is a map from a provider name to that provider's settings, given as the
   * fields of the global provider's options (`identityProvider.url` -> `url`), Secrets included.
   */
  | { readonly form: 'provider_map'; readonly path: string }
  /**
   * Not a field; `reason` says why and what to use instead, and `instead` is the field that
   * gives its value, if one does (`certificates` for `certificate_file`).
   */
  | { readonly form: 'left_out'; readonly reason: string; readonly instead?: string };

/** Why an option is not a field, and the field that replaces it if any. */
export interface LeftOut {
  readonly reason: string;
  readonly instead?: string;
}

/** A field naming a Secret whose every data entry adds one entry to a map option. */
export interface SecretMapField {
  readonly path: string;
  /** The map option's key. */
  readonly of: string;
}

/**
 * The spec names both `identityProvider.requestParams` and `identityProvider.requestParamsSecret`:
 * parameters that are credentials (a client assertion, a tenant key) live in a Secret.
 */
export const SECRET_MAP_FIELDS: readonly SecretMapField[] = [
  { path: 'identityProvider.requestParamsSecret', of: 'idp_request_params' },
];

const FROM_INGRESS =
  'routes come from Ingress and Gateway API HTTPRoute objects, with options as annotations';
const FROM_TLS_SECRETS = 'listener certificates come from TLS Secrets named in `certificates`';

/**
 * Options that are not fields, with the reason. `*_file` options are left out by rule (see
 * orchestrationField) and need no row here.
 */
export const LEFT_OUT_OF_KUBERNETES: Readonly<Record<string, LeftOut>> = {
  services: {
    reason:
      'which services a pod runs is fixed when it starts and may differ between Deployments sharing one settings object: set the `SERVICES` environment variable of the pod',
  },
  certificate: { reason: FROM_TLS_SECRETS, instead: 'certificates' },
  certificate_key: { reason: FROM_TLS_SECRETS, instead: 'certificates' },
  routes: { reason: FROM_INGRESS },
  policy: { reason: FROM_INGRESS },
};

/** `idp_provider_url` -> `idpProviderUrl`. */
export function camelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/** How many options read a key of the Secret named at `path`. */
function sharersOf(path: string): number {
  return GLOBAL_OPTIONS.filter((option) => typeof option.field === 'object' && option.field.secret === path)
    .length;
}

/**
 * The option's field in the settings resource (see the module doc). A `*_file` option is left
 * out: a file path means nothing to an object in the API server, and the value it would read
 * comes from a Secret instead. A secret option with no `field` is a Secret reference at its
 * camelCase name whose default data key is the option's key.
 */
export function orchestrationField(option: OptionSpec): OrchestrationField {
  const leftOut = LEFT_OUT_OF_KUBERNETES[option.key];
  if (leftOut !== undefined) return { form: 'left_out', ...leftOut };
  const kind = option.kind;
  if (kind.type === 'pem_file')
    return { form: 'left_out', reason: `a file path: ${FROM_TLS_SECRETS}`, instead: 'certificates' };
  if (kind.type === 'file') {
    const target = GLOBAL_OPTIONS.find((other) => other.key === kind.of);
    const field = target === undefined ? undefined : orchestrationField(target);
    if (target === undefined || field === undefined || field.form === 'left_out')
      throw new Error(`${option.key} reads an option that is no field`);
    return {
      form: 'left_out',
      reason: `a file path: \`${target.key}\` comes from ${fieldText(target)} instead`,
      instead: field.path,
    };
  }
  if (kind.type === 'identity_providers')
    return {
      form: 'provider_map',
      path: typeof option.field === 'string' ? option.field : camelCase(option.key),
    };
  const field = option.field;
  if (typeof field === 'object')
    return { form: 'secret', path: field.secret, key: field.key, shared: sharersOf(field.secret) > 1 };
  const path = field ?? camelCase(option.key);
  return option.secret ? { form: 'secret', path, key: option.key, shared: false } : { form: 'value', path };
}

/** The field of an option in words, as docs and messages name it: `secrets` (key `shared_secret`). */
export function fieldText(option: OptionSpec): string {
  const field = orchestrationField(option);
  switch (field.form) {
    case 'value':
      return `\`${field.path}\``;
    case 'provider_map':
      return `\`${field.path}\` (a map: provider name -> the fields of \`identityProvider\`)`;
    case 'secret':
      return `\`${field.path}\` (Secret key \`${field.key}\`)`;
    case 'left_out':
      return 'none';
  }
}
