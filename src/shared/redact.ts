/**
 * Redaction of secrets in free log text: Envoy's debug lines (header dumps,
 * paths, proto text of Check requests) and grpc-js's own messages, before either reaches
 * Portcullis's log. It masks the values of the named headers in the forms those lines use
 * (`'name', 'value'`, `"name": "value"`, `key: "name" value: "value"`, `name: value`) and of the
 * named query parameters (`?name=value`, `&name=value`, and their percent-encoded copies inside
 * another parameter). Names are matched case-insensitively. Text only; structured records go
 * through pino's `redact` paths (logger.ts).
 */

/** The marker a masked value becomes. */
export const REDACTED = '[redacted]';

/** The names whose values `redactor` masks: header names, query-parameter names, Struct fields. */
export interface SecretNames {
  readonly headers: readonly string[];
  readonly params: readonly string[];
  /**
   * String fields of a `google.protobuf.Struct` in proto text (`key: "name" value { string_value:
   * "..." }`), as Envoy's debug lines dump dynamic metadata (RBAC's "checking request" line prints
   * jwt_authn's verified payload).
   */
  readonly fields?: readonly string[];
}

const escape = (name: string): string => name.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/**
 * A function that returns `text` with every value of `names` replaced by `REDACTED`. Pure and
 * linear: the expressions are built once here, with no nested quantifiers. Never throws.
 */
export function redactor(names: SecretNames): (text: string) => string {
  const headers = names.headers.map(escape).join('|');
  const params = names.params.map(escape).join('|');
  const rules: [RegExp, string][] = [];
  if (headers !== '') {
    rules.push(
      // Envoy's header dumps: 'name', 'value', each quote backslash-escaped under
      // --log-format-escaped; the value ends at the next quote, escaped or not
      [
        new RegExp(`(\\\\?'(?:${headers})\\\\?',\\s*\\\\?')(?:[^'\\\\]|\\\\(?!'))*(\\\\?')`, 'gi'),
        `$1${REDACTED}$2`,
      ],
      // JSON, and proto text (`key: "name" value: "..."`)
      [new RegExp(`("(?:${headers})"\\s*(?::|\\s+value:)\\s*")(?:[^"\\\\]|\\\\.)*"`, 'gi'), `$1${REDACTED}"`],
      // HTTP/1 style and grpc-js metadata: name: value, to the end of the line or an escaped
      // newline, whatever the value holds (a stray quote in it must not end it early)
      [
        new RegExp(`(^|[\\s{,(])((?:${headers}):[ \\t]*)(?:[^\\r\\n\\\\]|\\\\(?![nr]))+`, 'gim'),
        `$1$2${REDACTED}`,
      ],
    );
  }
  const fields = (names.fields ?? []).map(escape).join('|');
  if (fields !== '') {
    // key: "name" value { string_value: "..." }, quotes backslash-escaped and newlines written
    // as \n under --log-format-escaped
    rules.push([
      new RegExp(
        `(key:\\s*\\\\?"(?:${fields})\\\\?"(?:\\s|\\\\n)*value\\s*\\{(?:\\s|\\\\n)*string_value:\\s*\\\\?")(?:[^"\\\\]|\\\\(?!"))*(\\\\?")`,
        'gi',
      ),
      `$1${REDACTED}$2`,
    ]);
  }
  if (params !== '') {
    rules.push([
      new RegExp(`((?:[?&;]|%3f|%26)(?:${params})(?:=|%3d))[^&\\s'"\\\\#]*?(?=&|%26|[\\s'"\\\\#]|$)`, 'gi'),
      `$1${REDACTED}`,
    ]);
  }
  return (text) => rules.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), text);
}
