/**
 * The registry's `auth` mapping schema (TypeBox), snake_case as operators write it. Only the
 * registry check loads it, in its own worker thread when the gateway serves: the serving
 * process imports the types alone.
 */
import Type from 'typebox';

const SECRET_ENV = Type.String({ pattern: '^AIRLOCK_SECRET_[A-Z0-9_]{1,100}$' });
const SCOPE = Type.String({ pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]{1,128}$' });

const CLIENT_KEYS = {
  token_endpoint: Type.String({ minLength: 1, maxLength: 2048 }),
  client_id: Type.String({ minLength: 1, maxLength: 256, pattern: '^[\\x21-\\x7e]+$' }),
  /** client_secret_basic. */
  client_secret_env: Type.Optional(SECRET_ENV),
  /** private_key_jwt: a private JWK (JSON) in this variable. */
  client_assertion_key_env: Type.Optional(SECRET_ENV),
  scopes: Type.Array(SCOPE, { maxItems: 32, default: [] }),
  audience: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  resource: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
};

/**
 * The `auth` mapping of a registry entry: one kind, and optionally the card's say.
 *
 * @example
 * ```ts
 * const EntrySchema = Type.Object({ auth: Type.Optional(AuthSchema) });
 * ```
 */
export const AuthSchema = Type.Object(
  {
    bearer_env: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    oauth2_client_credentials: Type.Optional(Type.Object(CLIENT_KEYS, { additionalProperties: false })),
    token_exchange: Type.Optional(
      Type.Object(
        {
          ...CLIENT_KEYS,
          /** The subject token when the call has no delegated caller (the CLI, the library). */
          subject_token_env: Type.Optional(SECRET_ENV),
          actor_token_env: Type.Optional(SECRET_ENV),
        },
        { additionalProperties: false },
      ),
    ),
    jwt_bearer: Type.Optional(
      Type.Object(
        {
          ...CLIENT_KEYS,
          /** RFC 7523 §2.1: the private JWK the authorization grant assertion is signed with. */
          assertion_key_env: SECRET_ENV,
          /** The assertion's `sub`: who the token is for. */
          assertion_subject: Type.String({ minLength: 1, maxLength: 256, pattern: '^[\\x21-\\x7e]+$' }),
          /** The assertion's `iss`; default the client id. */
          assertion_issuer: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: '^[\\x21-\\x7e]+$' })),
        },
        { additionalProperties: false },
      ),
    ),
    /** Read the card's security requirements: send a token only as (and with the scopes) the card asks. */
    from_card: Type.Boolean({ default: false }),
    /** The card's name of the scheme the entry supplies (with from_card). */
    card_scheme: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' })),
  },
  { additionalProperties: false },
);
