/**
 * The `module` backend's config schema: a JS/TS module exporting an `AgentBackend`. Owned here,
 * next to the loader that reads it; `src/config/schema.ts` composes it into the whole schema.
 *
 * @example
 * ```yaml
 * backend: { type: module, module: ./agents/helpdesk.mjs, export: createHelpdesk }
 * ```
 */
import Type, { type Static } from 'typebox';

/**
 * A JS/TS module exporting an `AgentBackend` (or a factory of one).
 *
 * @example
 * ```ts
 * const withDefaults = Value.Default(ModuleBackendSchema, { type: 'module', module: './agent.mjs' });
 * ```
 */
export const ModuleBackendSchema = Type.Object(
  {
    type: Type.Literal('module'),
    /** A path (relative to the working directory) of a .js/.mjs module, or .ts/.mts when tsx is installed. */
    module: Type.String({ minLength: 1, maxLength: 4096 }),
    /** The export to use: an AgentBackend object or a function (options) => AgentBackend. */
    export: Type.String({ pattern: '^[A-Za-z_$][A-Za-z0-9_$]*$', default: 'default' }),
    /** Passed to the factory as is. */
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

/**
 * A `module` backend's config as validated (defaults applied).
 *
 * @example
 * ```ts
 * const backend = await loadModuleBackend(config satisfies ModuleBackendConfig);
 * ```
 */
export type ModuleBackendConfig = Static<typeof ModuleBackendSchema>;
