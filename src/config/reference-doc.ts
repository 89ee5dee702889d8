import { ERROR_CODES } from '../shared/error-codes.js';
import {
  envName,
  GLOBAL_OPTIONS,
  type NotYetSupported,
  type OptionGroup,
  type OptionKind,
  type OptionSpec,
} from './option-table.js';
import { fieldText, orchestrationField, SECRET_MAP_FIELDS } from './orchestration-fields.js';
import { CRITERIA, LIST_MATCHER_OPERATORS, STRING_MATCHER_OPERATORS } from './policy-types.js';
import {
  PEER_ONLY_OPTIONS,
  PEER_ONLY_REFUSED,
  PEER_ONLY_REPLACED,
  REMOVED_OPTIONS,
} from './removed-options.js';
import { ROUTE_OPTIONS } from './route-option-table.js';
import { UNSUPPORTED_CRITERIA } from './unsupported-options.js';

const GROUPS: readonly OptionGroup[] = [
  'Services',
  'Secrets',
  'Identity provider',
  'Cookies',
  'Identity headers',
  'Listeners and TLS',
  'Timeouts',
  'Observability',
  'Databroker',
  'Routes',
];

const CRITERIA_DOCS: Readonly<Record<(typeof CRITERIA)[number], string>> = {
  accept: 'always true (everyone, signed in or not)',
  reject: 'always false',
  authenticated_user: 'any signed-in user',
  cors_preflight: 'a CORS preflight request (OPTIONS with Origin and Access-Control-Request-Method)',
  invalid_client_certificate: 'the client certificate is missing or not trusted',
  email: "string matcher on the user's email",
  domain: "string matcher on the domain of the user's email",
  user: "string matcher on the user's id",
  http_method: 'string matcher on the request method',
  http_path: 'string matcher on the request path (without the query)',
  claim: '`claim/<name>`: list matcher on an identity-provider claim, e.g. `claim/groups`',
  source_ip: 'an IP address or CIDR, or a list of them, matching the client address',
  client_certificate:
    'map of `fingerprint`, `spki_hash` (string or list), `san_email`, `san_dns`, `san_uri` (string matchers)',
  device: 'map of `is` (device ids), `approved` (bool), `type`',
};

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** The status an option's description starts with while it is not supported yet. */
export function supportText(mark: NotYetSupported): string {
  const setting = mark.which === undefined ? 'setting it' : `setting it to ${mark.which}`;
  const outcome = mark.severity === 'error' ? 'is an error' : 'warns';
  return `**Not supported yet (issue ${mark.issue}):** ${setting} ${outcome}; ${mark.effect}.`;
}

function describeOption(doc: string, mark: NotYetSupported | undefined): string {
  return mark === undefined ? doc : `${supportText(mark)} ${doc}`;
}

/** The type column of an option, in words. */
export function kindText(kind: OptionKind): string {
  switch (kind.type) {
    case 'string':
      return 'string';
    case 'url_path':
      return 'URL path';
    case 'url':
      return kind.https === 'required' ? 'https URL' : 'URL';
    case 'address':
      return 'address';
    case 'bool':
      return 'bool';
    case 'int':
      return `integer ${kind.min}–${kind.max}`;
    case 'number':
      return `number ${kind.min}–${kind.max}`;
    case 'duration':
      return 'duration';
    case 'enum':
      return `one of ${kind.values.map((value) => (value === '' ? '""' : value)).join(', ')}`;
    case 'enum_list':
      return `list of ${kind.values.join(', ')}`;
    case 'string_list':
      return 'list of strings';
    case 'string_map':
      return 'map of strings';
    case 'claims_headers':
      return 'list or map';
    case 'secret_bytes32':
      return 'base64, 32 bytes';
    case 'secret_string':
      return 'string';
    case 'signing_key':
    case 'pem':
      return 'PEM';
    case 'file':
    case 'pem_file':
      return 'file path';
    case 'certificates':
      return 'list of {cert, key}';
    case 'identity_providers':
      return 'map of name to provider';
    case 'routes':
      return 'list of routes';
  }
}

function optionRow(option: OptionSpec): string {
  const keys = [option.key, ...(option.aliases ?? [])].map((key) => `\`${key}\``).join(', ');
  const envs = [option.key, ...(option.aliases ?? [])].map((key) => `\`${envName(key)}\``).join(', ');
  const fallback =
    option.default === undefined ? '' : option.default === '' ? '`""`' : `\`${option.default}\``;
  const cells = [
    keys,
    envs,
    kindText(option.kind),
    fallback,
    option.services.join(', '),
    option.secret ? 'yes' : '',
    kubernetesFieldText(option),
    describeOption(option.doc, option.support),
  ];
  return `| ${cells.map(cell).join(' | ')} |`;
}

const INTRO = `# Configuration reference

Generated from the option table in \`src/config/option-table*.ts\` by \`npm run docs\`; a test fails
when this file and the table disagree. Do not edit by hand.

## Sources and precedence

- A config file given with \`--config <file>\` (or \`-config <file>\`): YAML (\`.yaml\`, \`.yml\`),
  JSON (\`.json\`), TOML (\`.toml\`) or Java properties (\`.properties\`, \`.props\`), chosen by
  extension. Any other extension is an error.
- Environment variables: each option's variable is its key in upper case (\`address\` ->
  \`ADDRESS\`); file keys are the variables in lower case. An empty variable counts as unset.
- Precedence: environment variable, then config file, then the default below.
- In environment variables and properties files, lists are comma-separated (\`openid,email\`) and
  maps are JSON objects (\`{"prompt":"login"}\`). Routes there are JSON, or base64 of YAML or JSON.
  A properties key with a dot sets one map entry: \`idp_request_params.prompt=login\`.
- \`*_file\` options read the value from a file. Surrounding whitespace, including the trailing
  newline most editors and \`echo\` add, is trimmed. Setting both \`x\` and \`x_file\` is an error.
- A key with no value (\`key:\` in YAML) is an error; remove the key to get the default.
- Durations are written like \`30s\`, \`1m30s\`, \`500ms\`, \`14h\`, at most \`2562047h47m16s\` (the
  most Envoy accepts); negative durations are errors.
- In YAML, JSON and TOML a value must have its option's type: booleans are \`true\` or \`false\`
  (\`yes\`, \`on\` or a quoted \`"true"\` are errors), numbers are unquoted, and text options take
  strings (write \`"1.10"\`: unquoted, YAML reads it as the number 1.1). Environment variables and
  properties files are text: booleans there are \`true\`/\`false\`, \`1\`/\`0\` or \`t\`/\`f\`.
- Certificates and private keys must parse, and a key must belong to its certificate; what Envoy
  would refuse is an error at its key.
- Secret values never appear in logs or error messages; errors name the key instead.
- Every problem is reported at once, each with its key path (\`routes[3].policy[0].allow.and[1]\`),
  or the environment variable's name, and the line in the file where it can tell.
- Unknown keys, at the top level, in routes and in policies, are errors with a did-you-mean
  suggestion; removed options are errors that say what replaces them.
- Options marked **Not supported yet** are accepted but have no effect in this version: setting one
  is a warning, or an error where ignoring it would weaken security or lose data (see
  [Not supported yet](#not-supported-yet)).
`;

const COMMANDS = `## Commands

- \`portcullis validate --config <file>\`: exit 0 when the config is valid; otherwise exit 1 and list
  every problem with its key path and line.
- \`portcullis config migrate --config <file>\`: rewrites removed and renamed options (below) into
  today's form and lists each change. The result goes to standard output; \`--write\` replaces the
  file and keeps the original as \`<file>.bak\`. Exit 1 when something needs a person.
- \`portcullis --version\`: prints \`MAJOR.MINOR.PATCH+GITHASH\`.
`;

/** docs/reference.md, from the option tables (before prettier formats it). */
export function renderReference(): string {
  const parts: string[] = [INTRO, COMMANDS, '## Global options\n'];
  const header =
    '| Key | Environment | Type | Default | Services | Secret | Kubernetes field | Description |\n| --- | --- | --- | --- | --- | --- | --- | --- |';
  for (const group of GROUPS) {
    const rows = GLOBAL_OPTIONS.filter((option) => option.group === group).map(optionRow);
    parts.push(`### ${group}\n\n${header}\n${rows.join('\n')}\n`);
  }
  parts.push(kubernetesDocs());
  parts.push('## Route options\n\nEach entry of `routes` is a map of these keys.\n');
  parts.push(
    `| Key | Type | Description |\n| --- | --- | --- |\n${ROUTE_OPTIONS.map((option) => `| \`${option.key}\` | ${option.type} | ${cell(describeOption(option.doc, option.support))} |`).join('\n')}\n`,
  );
  parts.push(policyDocs(), notYetDocs(), removedDocs(), errorCodeDocs());
  return parts.join('\n');
}

/** An option's Kubernetes field for its row: the field, plus any Secret-map field beside it. */
function kubernetesFieldText(option: OptionSpec): string {
  const extra = SECRET_MAP_FIELDS.filter((field) => field.of === option.key).map(
    (field) => `, \`${field.path}\` (a Secret of entries)`,
  );
  return orchestrationField(option).form === 'left_out'
    ? 'none (see Kubernetes fields)'
    : `${fieldText(option)}${extra.join('')}`;
}

/** How the option table maps onto the Kubernetes settings resource, and what it leaves out. */
function kubernetesDocs(): string {
  const leftOut = GLOBAL_OPTIONS.flatMap((option) => {
    const field = orchestrationField(option);
    return field.form === 'left_out' ? [`| \`${option.key}\` | ${cell(field.reason)} |`] : [];
  });
  return `### Kubernetes fields

In Kubernetes the global options are the spec of the cluster-scoped \`Portcullis\` object named
\`global\` (\`portcullis.dev/v1alpha1\`, the CRD in \`deploy/kubernetes/crd.yaml\`, generated from
this table). The "Kubernetes field" column gives each option's field under \`spec\`. Secret values
never sit in the object: a field marked "Secret key" names a Secret (\`{name, namespace}\`; the
namespace defaults to Portcullis's own), and the value is that Secret's data key. Where one key
is the only one read, the reference may name another (\`{name, key}\`). \`certificates\` lists TLS
Secrets (\`tls.crt\`, \`tls.key\`). Errors in the object's status name these fields.

These options are not fields:

| Key | Why |
| --- | --- |
${leftOut.join('\n')}
`;
}

function policyDocs(): string {
  const rows = CRITERIA.map((name) => {
    const status = UNSUPPORTED_CRITERIA.includes(name)
      ? '**Not supported yet:** a policy using it is an error (it would never be true). '
      : '';
    return `| \`${name}\` | ${cell(status + CRITERIA_DOCS[name])} |`;
  }).join('\n');
  return `## Policy criteria

A route's \`policy\` is a rule, or a list of rules. A rule maps \`allow\` or \`deny\` to blocks \`and\`
(all criteria true), \`or\` (any), \`not\` (all false) and \`nor\` (at least one false); blocks and rules
are OR-ed, and deny beats allow. Each criterion is a map with one key:

| Criterion | Data |
| --- | --- |
${rows}

String matchers take a value (meaning \`is\`) or a map of ${STRING_MATCHER_OPERATORS.map((op) => `\`${op}\``).join(', ')}.
List matchers (claims) take a value (meaning \`has\`) or a map of ${LIST_MATCHER_OPERATORS.map((op) => `\`${op}\``).join(', ')},
each holding a string matcher.
`;
}

/** The options not supported yet, by the issue that builds them. */
function notYetDocs(): string {
  const marked = [
    ...GLOBAL_OPTIONS.map((option) => ({ key: option.key, mark: option.support })),
    ...ROUTE_OPTIONS.map((option) => ({ key: `routes[].${option.key}`, mark: option.support })),
  ];
  const issues = [...new Set(marked.flatMap(({ mark }) => (mark === undefined ? [] : [mark.issue])))];
  const rows = issues
    .sort((a, b) => a - b)
    .map((issue) => {
      const keys = marked
        .filter(({ mark }) => mark?.issue === issue)
        .map(({ key, mark }) => `\`${key}\`${mark?.which === undefined ? '' : ` (${mark.which})`}`);
      return `| ${issue} | ${keys.join(', ')} |`;
    });
  return `## Not supported yet

These options are accepted and validated, but this version does not act on them yet. Leaving one
unset or at its default is silent. Setting it is reported by \`portcullis validate\` and logged at
start-up, naming the option and the issue that builds it: as an error (the config is refused) where
ignoring it would weaken security or lose data, otherwise as a warning. Each option's description
above says which.

${rows.length === 0 ? 'None in this version: every option it accepts takes effect.' : `| Issue | Options |\n| --- | --- |\n${rows.join('\n')}`}
`;
}

function removedDocs(): string {
  const rows = REMOVED_OPTIONS.map((option) => {
    const scope = {
      global: 'option',
      route: 'route option',
      criterion: 'policy criterion',
      service: '`services` value',
    }[option.scope];
    return `| \`${option.key}\` | ${scope} | ${cell(option.fix)} |`;
  }).join('\n');
  return `## Removed and renamed options

Setting one of these is an error that names the replacement; \`portcullis config migrate\` rewrites
them. The environment variable forms (\`POLICY_FILE\`, \`HEADERS\`, ...) are errors too.

| Key | Kind | Instead |
| --- | --- | --- |
${rows}

## Options of the peer that Portcullis does not implement

These load with a warning and are ignored: ${PEER_ONLY_OPTIONS.map((key) => `\`${key}\``).join(', ')}.

These are errors, because ignoring them would open access: ${Object.entries(PEER_ONLY_REFUSED)
    .map(([key, consequence]) => `\`${key}\` (${consequence})`)
    .join(', ')}.

These are errors that name what Portcullis uses instead: ${Object.entries(PEER_ONLY_REPLACED)
    .map(([key, instead]) => `\`${key}\` (${instead})`)
    .join(', ')}.

The environment variable forms of both kinds of error (\`DOWNSTREAM_MTLS\`, \`HEALTH_CHECK_ADDR\`) are errors too.
`;
}

/** The error codes a user can meet (src/shared/error-codes.ts), for matching in logs and scripts. */
function errorCodeDocs(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, meaning]) => `| \`${code}\` | ${cell(meaning)} |`);
  return `## Error codes

Every error Portcullis reports carries one of these stable codes (\`code\` in JSON logs), so logs,
scripts and alerts can match on it instead of on message text.

| Code | Meaning |
| --- | --- |
${rows.join('\n')}
`;
}
