import type { IRAnswer, IRRedirect } from '../../ir/answer.js';
import type { EnumValue, Message } from '../../proto/messages.js';

/** HTTP redirect codes -> Envoy's `RedirectAction.RedirectResponseCode` names. */
const REDIRECT_CODE_NAMES: Readonly<
  Record<IRRedirect['code'], EnumValue<'envoy.config.route.v3.RedirectAction.RedirectResponseCode'>>
> = {
  301: 'MOVED_PERMANENTLY',
  302: 'FOUND',
  303: 'SEE_OTHER',
  307: 'TEMPORARY_REDIRECT',
  308: 'PERMANENT_REDIRECT',
};

/**
 * The action of a route that answers by itself, as the fields to put on its `route.v3.Route` in
 * place of `route`: `{ redirect: RedirectAction }` or `{ direct_response: DirectResponseAction }`
 * (body inline; none when empty). Only the fields the answer sets are written, so Envoy keeps
 * the rest of the request URL. ext_authz still runs on such routes (Envoy checks them like any
 * other since 1.20), so their policy applies first.
 */
export function answerAction(
  answer: IRAnswer,
): Pick<Message<'envoy.config.route.v3.Route'>, 'redirect' | 'direct_response'> {
  if (answer.kind === 'response') {
    const action: Message<'envoy.config.route.v3.DirectResponseAction'> = { status: answer.status };
    if (answer.body !== '') action.body = { inline_string: answer.body };
    return { direct_response: action };
  }
  const action: Message<'envoy.config.route.v3.RedirectAction'> = {
    response_code: REDIRECT_CODE_NAMES[answer.code],
  };
  if (answer.httpsRedirect) action.https_redirect = true;
  if (answer.scheme !== undefined) action.scheme_redirect = answer.scheme;
  if (answer.host !== undefined) action.host_redirect = answer.host;
  if (answer.port !== undefined) action.port_redirect = answer.port;
  if (answer.path?.kind === 'replace') action.path_redirect = answer.path.value;
  if (answer.path?.kind === 'prefix') action.prefix_rewrite = answer.path.value;
  if (answer.stripQuery) action.strip_query = true;
  return { redirect: action };
}
