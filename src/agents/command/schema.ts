/**
 * The `command` backend's config schema: a program run once per turn. Owned here, next to the
 * backend that reads it; `src/config/schema.ts` composes it into the whole config schema.
 *
 * @example
 * ```yaml
 * backend: { type: command, command: ./bin/answer, args: [--json], passEnv: [HOME] }
 * ```
 */
import Type, { type Static } from 'typebox';

const Milliseconds = (fallback: number): ReturnType<typeof Type.Integer> =>
  Type.Integer({ minimum: 100, maximum: 3_600_000, default: fallback });

/**
 * A program run once per turn: argument list (no shell), message on stdin, reply on stdout.
 *
 * @example
 * ```ts
 * const withDefaults = Value.Default(CommandBackendSchema, { type: 'command', command: 'cat' });
 * ```
 */
export const CommandBackendSchema = Type.Object(
  {
    type: Type.Literal('command'),
    /** A path (relative to the working directory) or a program name looked up in PATH at startup. */
    command: Type.String({ minLength: 1, maxLength: 4096 }),
    args: Type.Array(Type.String({ maxLength: 32_768 }), { maxItems: 256, default: [] }),
    /** Variables set for the program (values may use `${VAR}`). Nothing else is inherited… */
    env: Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), Type.String({ maxLength: 32_768 }), {
      default: {},
    }),
    /** …except these names, copied from Airlock's own environment when set. */
    passEnv: Type.Array(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), { maxItems: 256, default: [] }),
    cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    /** `text`: the caller's text as sent; `prompt`: the framed prompt (system note, then the framed text). */
    input: Type.Union([Type.Literal('text'), Type.Literal('prompt')], { default: 'text' }),
    /** The whole run; then the process group is killed and the task fails. */
    timeoutMs: Milliseconds(60_000),
    /** Bytes of stdout per turn; beyond it the process group is killed and the task fails. */
    maxOutputBytes: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024 }),
    /** Bytes of stderr kept for the log per turn. */
    maxStderrBytes: Type.Integer({ minimum: 0, maximum: 1024 * 1024, default: 8192 }),
  },
  { additionalProperties: false },
);

/**
 * A `command` backend's config as validated (defaults applied).
 *
 * @example
 * ```ts
 * const backend = createCommandBackend(config satisfies CommandBackendConfig);
 * ```
 */
export type CommandBackendConfig = Static<typeof CommandBackendSchema>;
