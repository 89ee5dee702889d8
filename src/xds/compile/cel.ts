import type { Message } from '../../proto/messages.js';

/** A CEL expression node as Envoy's CEL matcher takes it (`google.api.expr.v1alpha1.Expr`). */
export type CelExpr = Message<'google.api.expr.v1alpha1.Expr'>;

/** A node before it is numbered: `celParsed` gives every node its id. */
export type CelNode =
  | { readonly kind: 'ident'; readonly name: string }
  | { readonly kind: 'select'; readonly operand: CelNode; readonly field: string }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'double'; readonly value: number }
  | { readonly kind: 'call'; readonly fn: string; readonly args: readonly CelNode[] };

/** The identifier `name` (`metadata`, `xds`). */
export const ident = (name: string): CelNode => ({ kind: 'ident', name });

/** `operand.field`. */
export const select = (operand: CelNode, field: string): CelNode => ({ kind: 'select', operand, field });

/** A string literal. */
export const str = (value: string): CelNode => ({ kind: 'string', value });

/** A double literal (numbers in metadata are doubles: CEL does not compare a double with an int). */
export const double = (value: number): CelNode => ({ kind: 'double', value });

/** `operand[key]`: CEL's index operator is the call `_[_]`. */
export const index = (operand: CelNode, key: string): CelNode => ({
  kind: 'call',
  fn: '_[_]',
  args: [operand, str(key)],
});

/** `operand[k0][k1]...`. */
export const path = (operand: CelNode, keys: readonly string[]): CelNode =>
  keys.reduce((node, key) => index(node, key), operand);

/** `element in list`: the call `@in` (over a map it tests the keys). */
export const isIn = (element: CelNode, list: CelNode): CelNode => ({
  kind: 'call',
  fn: '@in',
  args: [element, list],
});

/** `left > right`. */
export const greater = (left: CelNode, right: CelNode): CelNode => ({
  kind: 'call',
  fn: '_>_',
  args: [left, right],
});

/** `left && right`. */
export const and = (left: CelNode, right: CelNode): CelNode => ({
  kind: 'call',
  fn: '_&&_',
  args: [left, right],
});

/**
 * `node` as the parsed AST Envoy's CEL matcher needs (its 1.40 CelMatcher takes no expression text:
 * a `cel_expr_string` parses but is refused as "CEL expression not set", so compile builds the AST
 * itself). Nodes are numbered 1, 2, ... depth first, left to right, so the same expression always
 * gives the same message. A CEL evaluation error (a missing key, a value of the wrong type) makes
 * the matcher not match, which the fast path relies on to fail closed.
 */
export function celParsed(node: CelNode): Message<'google.api.expr.v1alpha1.ParsedExpr'> {
  let next = 0;
  const build = (at: CelNode): CelExpr => {
    next += 1;
    const id = next;
    switch (at.kind) {
      case 'ident':
        return { id, ident_expr: { name: at.name } };
      case 'select':
        return { id, select_expr: { operand: build(at.operand), field: at.field } };
      case 'string':
        return { id, const_expr: { string_value: at.value } };
      case 'double':
        return { id, const_expr: { double_value: at.value } };
      case 'call':
        return { id, call_expr: { function: at.fn, args: at.args.map(build) } };
    }
  };
  return { expr: build(node) };
}
