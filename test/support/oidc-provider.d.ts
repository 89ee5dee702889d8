/**
 * The part of oidc-provider@9's API the test IdP uses (the package ships no types and
 * @types/oidc-provider describes v8). Kept to what test/support/test-idp.ts calls.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface AdapterPayload {
    readonly [key: string]: unknown;
    accountId?: string;
    grantId?: string;
    uid?: string;
    userCode?: string;
    consumed?: number;
  }

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface OidcClientView {
    readonly clientId: string;
    grantTypeAllowed(type: string): boolean;
  }

  export interface KoaContext {
    readonly path: string;
    readonly method: string;
    body: unknown;
    type: string;
    status: number;
    readonly host: string;
    readonly oidc?: {
      readonly route?: string;
      readonly params?: Readonly<Record<string, unknown>>;
      readonly client?: OidcClientView;
      readonly session?: { readonly accountId?: string; grantIdFor(clientId: string): string | undefined };
      readonly result?: { readonly consent?: { readonly grantId?: string } };
      readonly provider: Provider;
    };
  }

  export interface Account {
    readonly accountId: string;
    claims(use: string, scope: string): Promise<Record<string, unknown>>;
  }

  export interface InteractionDetails {
    readonly uid: string;
    readonly prompt: { readonly name: string; readonly details: Readonly<Record<string, unknown>> };
    readonly params: Readonly<Record<string, unknown>>;
  }

  export class GrantModel {
    constructor(init: { accountId: string; clientId: string });
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: readonly string[]): void;
    save(): Promise<string>;
  }

  export interface GrantStatic {
    new (init: { accountId: string; clientId: string }): GrantModel;
    find(id: string): Promise<GrantModel | undefined>;
  }

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    readonly Grant: GrantStatic;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void;
    on(event: string, listener: (ctx: KoaContext, ...rest: unknown[]) => void): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
  }

  export default Provider;
}
