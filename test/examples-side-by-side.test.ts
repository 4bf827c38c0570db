/**
 * Every example runs beside every other (issue 19: two examples on one port, two gateways
 * writing one audit file broke its chain): each has a port of its own, and nothing one of them
 * writes (audit file, pins, tool pins) is written by another; `airlock mcp --http` has a default
 * port no example uses.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { DEFAULT_MCP_PORT } from '../src/mcp/http.js';

interface ExampleConfig {
  server?: { port?: number };
  audit?: { file?: string };
  upstreams?: { pins?: string };
  tools?: { pins?: string };
}

const examples = readdirSync('examples')
  .filter((name) => name.endsWith('.yaml') && !name.endsWith('.registry.yaml') && name !== 'registry.yaml')
  .map((name) => ({ name, config: parse(readFileSync(join('examples', name), 'utf8')) as ExampleConfig }));

describe('the examples run side by side', () => {
  it('finds the examples', () => {
    assert.ok(examples.length >= 8, examples.map((example) => example.name).join(', '));
  });

  it('each listens on a port of its own, and none on the MCP server’s default', () => {
    const byPort = new Map<number, string>();
    for (const { name, config } of examples) {
      const port = config.server?.port;
      assert.ok(typeof port === 'number' && port > 0, `${name}: server.port`);
      assert.equal(byPort.get(port), undefined, `${name} and ${byPort.get(port)} both use port ${port}`);
      byPort.set(port, name);
    }
    assert.equal(byPort.get(DEFAULT_MCP_PORT), undefined, `airlock mcp --http defaults to ${DEFAULT_MCP_PORT}`);
  });

  it('no two write the same audit file or pin file', () => {
    const writers = new Map<string, string>();
    for (const { name, config } of examples) {
      for (const path of [config.audit?.file, config.upstreams?.pins, config.tools?.pins]) {
        if (path === undefined) continue;
        assert.equal(writers.get(path), undefined, `${name} and ${writers.get(path)} both write ${path}`);
        writers.set(path, name);
      }
    }
  });
});
