/**
 * Every fenced ```yaml block in README.md and docs/**\/*.md loads, as a person would paste it:
 *
 * - a whole config (a top-level `agents:` list) through the real loader (`parseConfig`);
 * - a config section (every top-level key is a config section: `store`, `tools`, …) through
 *   the loader too, after a one-agent stub;
 * - a block marked `<!-- yaml: registry -->` right above its fence through the outbound
 *   registry's loader (`parseRegistry`);
 * - anything else (a piece of a section, e.g. a backend's `env`) as YAML, with the loader's
 *   YAML rules (duplicate keys refused).
 *
 * The variables a block names (`${VAR}`, `{ env: VAR }`, `*_env: VAR`) are set to dummy values
 * of the right shape (a PostgreSQL URL for `DATABASE_URL`, a Redis URL for `REDIS_URL`, else a
 * 40-character token). A block that is deliberately partial, because it names a file only the
 * operator has (a key, a JWK Set), is marked `<!-- yaml: fragment … -->` (or
 * `<!-- yaml: registry fragment … -->`) right above its fence and is only parsed as YAML.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parseRegistry } from '../src/client/registry.js';
import { parseConfig } from '../src/config/load.js';
import { ConfigSchema } from '../src/config/schema.js';
import { parseYamlDocument } from '../src/config/yaml.js';

const ROOT = join(import.meta.dirname, '..');
const STUB_AGENT =
  'agents:\n  - { slug: stub, name: Stub, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }\n';

interface Block {
  where: string;
  marker: string | undefined;
  text: string;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

function yamlBlocks(path: string): Block[] {
  const text = readFileSync(path, 'utf8');
  const blocks: Block[] = [];
  for (const match of text.matchAll(
    /(?:<!--\s*yaml:\s*([^>]*?)\s*-->\n\n?)?^```ya?ml[ \t]*\n([\s\S]*?)^```[ \t]*$/gm,
  )) {
    const fence = match.index + match[0].indexOf('```');
    const line = text.slice(0, fence).split('\n').length;
    blocks.push({ where: `${relative(ROOT, path)}:${line}`, marker: match[1], text: match[2] ?? '' });
  }
  return blocks;
}

/** Dummy values of the right shape for every variable the block names. */
function dummyEnv(text: string): Record<string, string> {
  const names = [
    ...text.matchAll(/\$\{([A-Z_][A-Z0-9_]*)\}/g),
    ...text.matchAll(/\b(?:env|[a-z_]+_env):\s*([A-Z_][A-Z0-9_]*)\b/g),
  ].map((match) => match[1] ?? '');
  const env: Record<string, string> = {};
  for (const name of names) {
    if (name.endsWith('DATABASE_URL')) env[name] = 'postgres://airlock:secret@127.0.0.1:5432/airlock';
    else if (name.endsWith('REDIS_URL')) env[name] = 'redis://127.0.0.1:6379';
    else env[name] = `dummy-${name.toLowerCase().replace(/_/g, '-')}-0123456789abcdef0123456789abcdef`;
  }
  return env;
}

const SECTIONS = new Set(Object.keys((ConfigSchema as { properties: Record<string, unknown> }).properties));

function load(block: Block): string {
  const env = dummyEnv(block.text);
  const marker = block.marker ?? '';
  const document = parseYamlDocument(block.text);
  if (marker.startsWith('fragment') || marker.startsWith('registry fragment')) return 'yaml';
  if (marker.startsWith('registry')) {
    parseRegistry(block.text, env, block.where);
    return 'registry';
  }
  assert.equal(marker, '', `${block.where}: unknown marker "${marker}" (fragment, registry or registry fragment)`);
  const keys = document !== null && typeof document === 'object' ? Object.keys(document) : [];
  if (keys.includes('agents')) {
    parseConfig(block.text, env, block.where);
    return 'config';
  }
  if (keys.length > 0 && keys.every((key) => SECTIONS.has(key))) {
    parseConfig(`${STUB_AGENT}${block.text}`, env, block.where);
    return 'section';
  }
  return 'yaml';
}

const files = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];
const blocks = files.flatMap(yamlBlocks);

describe('YAML in the docs', () => {
  it('finds the blocks (and whole configs among them)', () => {
    assert.ok(blocks.length >= 10, `only ${blocks.length} yaml blocks found`);
    assert.ok(blocks.some((block) => /^agents:/m.test(block.text) && block.marker === undefined));
  });

  for (const block of blocks) {
    it(`${block.where} loads`, () => {
      try {
        load(block);
      } catch (error) {
        assert.fail(`${block.where}: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
  }

  it('reads the markers and refuses what it should', () => {
    const marked = yamlBlocks(join(ROOT, 'docs', 'OUTBOUND.md')).filter((block) => block.marker === 'registry');
    assert.ok(marked.length > 0);
    assert.throws(() =>
      load({ where: 'x', marker: undefined, text: 'store: { type: postgres, url: ${DATABASE_URL} }\n' }),
    );
    assert.throws(
      () => load({ where: 'x', marker: undefined, text: 'store: { type: pg }\n' }),
      /store\.type: must be one of/,
    );
  });
});
