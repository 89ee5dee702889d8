/**
 * The CustomResourceDefinition of the settings resource (`portcullises.portcullis.dev`, kind
 * Portcullis, cluster-scoped, one object named `global`), built from the option table through
 * spec-fields.ts: each option kind becomes its OpenAPI v3 schema, each doc its description, and
 * secret options become Secret references, so the API server refuses a secret written inline.
 * crd-file.ts writes it to deploy/kubernetes/crd.yaml; a test fails when that file drifts.
 */
import type { OptionKind, OptionSpec } from '../config/option-table.js';
import { supportText } from '../config/reference-doc.js';
import { compileRe2 } from '../shared/re2.js';
import { renameOptionKeys } from './field-names.js';
import { specFields, TLS_CERT_KEY, TLS_KEY_KEY, type SpecField } from './spec-fields.js';

/** The settings resource's API group: a domain the project owns. */
export const SETTINGS_GROUP = 'portcullis.dev';
/** Its one version; alpha while the fields may still change. */
export const SETTINGS_VERSION = 'v1alpha1';
/** Its kind. */
export const SETTINGS_KIND = 'Portcullis';
/** Its plural (the resource name in API paths). */
export const SETTINGS_PLURAL = 'portcullises';
/** The name of the one object read: the CRD refuses any other. */
export const SETTINGS_OBJECT_NAME = 'global';

/** The condition types the status carries. */
export const CONDITION_TYPES = ['Ready', 'Valid'] as const;

/** An OpenAPI v3 schema node (the subset the CRD uses). */
export type Schema = { readonly [name: string]: unknown };

/** A duration as the option table reads it (config/duration.ts): `30s`, `1m30s`, `500ms`, `0`. */
const DURATION_PATTERN = '^(0|([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$';

/** What spec groups (the first part of a dotted field) hold, for their descriptions. */
const GROUP_DOCS: Readonly<Record<string, string>> = {
  identityProvider: 'The identity provider users sign in with (OIDC).',
  authenticate: 'The authenticate service, where browsers sign in.',
  cookie: 'The session cookie.',
  storage: 'Where the databroker keeps sessions: `memory` (one instance) or `redis` (shared).',
};

/**
 * A JavaScript pattern as the API server's (RE2) regexp syntax, or undefined when RE2 cannot
 * express it (lookaround): then only `validate` checks the value, and its error reaches status.
 */
function re2Pattern(pattern: RegExp): string | undefined {
  if (!/^i?$/.test(pattern.flags)) return undefined;
  const source = pattern.flags === 'i' ? `(?i)${pattern.source}` : pattern.source;
  return compileRe2(source).ok ? source : undefined;
}

/** A description from an option doc: field names for keys, and the not-yet-supported mark. */
function describeOption(option: OptionSpec): string {
  const doc = option.support === undefined ? option.doc : `${supportText(option.support)} ${option.doc}`;
  return renameOptionKeys(doc, '').trim();
}

function secretRef(description: string, withKey: boolean): Schema {
  return {
    type: 'object',
    description,
    required: ['name'],
    properties: {
      name: { type: 'string', minLength: 1, description: 'Name of the Secret.' },
      namespace: {
        type: 'string',
        description: 'Namespace of the Secret; default: the namespace Portcullis runs in.',
      },
      ...(withKey ? { key: { type: 'string', minLength: 1, description: 'Data key in the Secret.' } } : {}),
    },
  };
}

/** The schema of a value-form option by its kind (secret kinds are always Secret references). */
export function kindSchema(kind: OptionKind, description: string): Schema {
  switch (kind.type) {
    case 'string': {
      const pattern = kind.pattern === undefined ? undefined : re2Pattern(kind.pattern);
      return { type: 'string', description, ...(pattern === undefined ? {} : { pattern }) };
    }
    case 'url_path':
      return { type: 'string', description, pattern: '^/' };
    case 'url':
    case 'address':
    case 'pem':
      return { type: 'string', description };
    case 'bool':
      return { type: 'boolean', description };
    case 'int':
      return { type: 'integer', description, minimum: kind.min, maximum: kind.max };
    case 'number':
      return { type: 'number', description, minimum: kind.min, maximum: kind.max };
    case 'duration':
      return { type: 'string', description, pattern: DURATION_PATTERN };
    case 'enum':
      return { type: 'string', description, enum: [...kind.values] };
    case 'enum_list':
      return { type: 'array', description, items: { type: 'string', enum: [...kind.values] } };
    case 'string_list':
      return {
        type: 'array',
        description,
        items: { type: 'string' },
        ...(kind.nonEmpty === true ? { minItems: 1 } : {}),
      };
    case 'string_map':
    case 'claims_headers':
      return { type: 'object', description, additionalProperties: { type: 'string' } };
    case 'certificates':
      return {
        type: 'array',
        description: `${description} Each entry names a TLS Secret (keys \`${TLS_CERT_KEY}\` and \`${TLS_KEY_KEY}\`).`,
        items: secretRef('A TLS Secret.', false),
      };
    case 'secret_bytes32':
    case 'secret_string':
    case 'signing_key':
    case 'file':
    case 'pem_file':
    case 'routes':
    case 'identity_providers':
      throw new Error(`an option of kind ${kind.type} cannot be a plain field (see orchestration-fields.ts)`);
  }
}

/** The schema of one spec field. */
function fieldSchema(field: SpecField): Schema {
  switch (field.form) {
    case 'value':
      return kindSchema(field.option.kind, describeOption(field.option));
    case 'secret_key':
      return secretRef(
        `Names the Secret whose key \`${field.key}\` (or \`key\`) holds this value, never written here. ${describeOption(field.option)}`,
        true,
      );
    case 'shared_secret':
      return secretRef(
        `Names the Secret holding ${field.keys.map((entry) => `\`${entry.key}\` (${describeOption(entry.option)})`).join('; ')}`,
        false,
      );
    case 'secret_map':
      return secretRef(
        `Names a Secret whose every entry is one more entry of \`${renameOptionKeys(field.option.key, '')}\`, for values that are credentials.`,
        false,
      );
    case 'provider_map':
      return providerMapSchema(field);
  }
}

/**
 * `identityProviders`: a map (any provider name) of objects with the fields of `like`, each
 * described as its namesake there. Names are checked by validate (the API server cannot check a
 * map's keys without CEL), and its message reaches status.
 */
function providerMapSchema(field: Extract<SpecField, { form: 'provider_map' }>): Schema {
  const properties = Object.fromEntries(
    field.entry.map((inner) => {
      const schema = fieldSchema(inner);
      const namesake = `As \`${field.like}.${inner.path}\`, for this provider.`;
      return [inner.path, { ...schema, description: `${namesake} ${String(schema.description)}` }];
    }),
  );
  const required = field.entry.flatMap((inner) =>
    inner.form === 'shared_secret'
      ? [`\`${inner.path}\` (keys ${inner.keys.map((entry) => `\`${entry.key}\``).join(' and ')})`]
      : inner.form === 'secret_key'
        ? [`\`${inner.path}\` (key \`${inner.key}\`)`]
        : [],
  );
  return {
    type: 'object',
    description: `Named identity providers that routes choose with the annotation \`portcullis.dev/identity_provider: <name>\`; other routes use \`${field.like}\` (named \`default\`). Each name (a lower-case letter, then lower-case letters, digits, \`-\` or \`_\`; not \`default\`) maps to the fields of \`${field.like}\`, read and checked as theirs; ${required.join(', ')} is required, and \`provider\` or \`url\`. A session from one provider never counts on a route of another.`,
    additionalProperties: {
      type: 'object',
      description: `One provider: the fields of \`${field.like}\`.`,
      properties,
    },
  };
}

/** The spec's schema: fields nested by their dotted paths. */
export function specSchema(): Schema {
  const root: Record<string, Record<string, unknown>> = {};
  for (const field of specFields()) {
    const parts = field.path.split('.');
    const leaf = parts.pop() ?? field.path;
    let properties = root;
    for (const part of parts) {
      const group = (properties[part] ??= {
        type: 'object',
        description: GROUP_DOCS[part] ?? `Settings of ${part}.`,
        properties: {},
      });
      properties = group.properties as Record<string, Record<string, unknown>>;
    }
    if (properties[leaf] !== undefined) throw new Error(`two options have the field ${field.path}`);
    properties[leaf] = fieldSchema(field) as Record<string, unknown>;
  }
  return {
    type: 'object',
    description: 'The global settings; each field is an option of docs/reference.md.',
    properties: root,
  };
}

function statusSchema(): Schema {
  return {
    type: 'object',
    description: 'Whether the settings are in force, every problem found in them, and who owns each host.',
    properties: {
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
      conditions: {
        type: 'array',
        description:
          'Valid: the settings pass validation. Ready: they are in force (a refused change keeps the last good settings).',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
        items: {
          type: 'object',
          required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
          properties: {
            type: { type: 'string', enum: [...CONDITION_TYPES] },
            status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
            observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
            lastTransitionTime: { type: 'string', format: 'date-time' },
            reason: { type: 'string', maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' },
            message: { type: 'string', maxLength: 32768 },
          },
        },
      },
      errors: {
        type: 'array',
        description: "validate's problems, each naming its field (`spec.identityProvider.url`).",
        items: {
          type: 'object',
          required: ['field', 'message'],
          properties: { field: { type: 'string' }, message: { type: 'string' } },
        },
      },
      hostOwners: {
        type: 'object',
        description:
          'Each host an Ingress or HTTPRoute claims -> the namespace that owns it (the first to claim it; it keeps the host while any object claims it). Written by the replica holding the Lease, read by every replica; see docs/kubernetes.md, Multi-tenant safety.',
        additionalProperties: { type: 'string' },
      },
    },
  };
}

/** The whole CustomResourceDefinition object. */
export function settingsCrd(): Schema {
  const ready = '.status.conditions[?(@.type=="Ready")]';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${SETTINGS_PLURAL}.${SETTINGS_GROUP}` },
    spec: {
      group: SETTINGS_GROUP,
      scope: 'Cluster',
      names: {
        kind: SETTINGS_KIND,
        listKind: `${SETTINGS_KIND}List`,
        plural: SETTINGS_PLURAL,
        singular: SETTINGS_KIND.toLowerCase(),
      },
      versions: [
        {
          name: SETTINGS_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Ready', type: 'string', jsonPath: `${ready}.status` },
            { name: 'Reason', type: 'string', jsonPath: `${ready}.reason` },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: `Portcullis's global settings. One object, named ${SETTINGS_OBJECT_NAME}; routes come from Ingress and HTTPRoute objects.`,
              'x-kubernetes-validations': [
                {
                  rule: `self.metadata.name == '${SETTINGS_OBJECT_NAME}'`,
                  message: `the Portcullis settings object must be named ${SETTINGS_OBJECT_NAME}`,
                },
              ],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: specSchema(),
                status: statusSchema(),
              },
            },
          },
        },
      ],
    },
  };
}
