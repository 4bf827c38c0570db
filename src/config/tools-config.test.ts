/**
 * The `tools` section as the loader reads it (schema in src/tools/config.ts): servers, levels,
 * tokens only from AIRLOCK_SECRET_ variables, allow lists that name levelled tools, and no tools
 * for a command backend.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from './errors.js';
import { parseConfig } from './load.js';

const SERVERS = `tools:
  maxCallsPerTurn: 4
  servers:
    - name: files
      stdio: { command: node, args: [server.js], passEnv: [HOME] }
      tools:
        read_file: { level: L1 }
        write_file: { level: L4, description: Write a file. }
    - name: web
      http: { url: 'https://tools.example/mcp', token: '\${AIRLOCK_SECRET_WEB}' }
      optional: true
      tools: { search: { level: L2 } }
`;

function agent(extra: string, backend = '{ type: echo }'): string {
  return `agents:
  - slug: helper
    name: Helper
    description: d
    skills: [{ id: s, name: s, description: d }]
    backend: ${backend}
${extra}`;
}

function refuses(yaml: string, pattern: RegExp, env: Record<string, string> = {}): void {
  assert.throws(
    () => parseConfig(yaml, env),
    (error: unknown) => error instanceof ConfigError && pattern.test(error.message),
  );
}

const ENV = { AIRLOCK_SECRET_WEB: 'tool-token-0123456789' };

describe('tools config', () => {
  it('loads servers, levels and budgets with defaults; the token is a scrub secret', () => {
    const config = parseConfig(
      `${SERVERS}${agent('    allowTools: true\n    tools: { allow: [files.read_file, web.search] }')}`,
      ENV,
    );
    const tools = config.tools!;
    assert.equal(tools.maxCallsPerTurn, 4);
    assert.equal(tools.maxResultChars, 16_000);
    assert.equal(tools.pins, '.airlock/tool-pins.json');
    assert.equal(tools.servers[0]?.timeoutSeconds, 30);
    assert.equal(tools.servers[0]?.tools.write_file?.level, 'L4');
    assert.equal(tools.servers[1]?.http?.token, ENV.AIRLOCK_SECRET_WEB);
    assert.equal(tools.servers[1]?.http?.privateNetwork, false);
    assert.ok(config.scrubSecrets.includes(ENV.AIRLOCK_SECRET_WEB));
  });

  it('refuses an allow entry that names no levelled tool', () => {
    refuses(
      `${SERVERS}${agent('    allowTools: true\n    tools: { allow: [files.move_file] }')}`,
      /agents\[0\]\.tools\.allow\[0\].*files\.move_file/,
      ENV,
    );
    refuses(`${SERVERS}${agent('    allowTools: true\n    tools: { allow: [read_file] }')}`, /server\.tool/, ENV);
  });

  it('refuses a command backend with tools configured', () => {
    refuses(
      `${SERVERS}${agent('    allowTools: true\n    tools: { allow: [files.read_file] }', '{ type: command, command: cat }')}`,
      /agents\[0\]\.tools.*command backend/,
      ENV,
    );
  });

  it('refuses a token that is not ${AIRLOCK_SECRET_…}, before interpolation', () => {
    const inline = SERVERS.replace("'${AIRLOCK_SECRET_WEB}'", 'plain-token-value');
    refuses(`${inline}${agent('')}`, /tools\.servers\[1\]\.http\.token.*AIRLOCK_SECRET_/, ENV);
    const other = SERVERS.replace('AIRLOCK_SECRET_WEB', 'OPENAI_API_KEY');
    refuses(`${other}${agent('')}`, /tools\.servers\[1\]\.http\.token/, { OPENAI_API_KEY: 'sk-0123456789abcdef' });
    refuses(`${SERVERS}${agent('')}`, /tools\.servers\[1\]\.http\.token.*at least 8/, { AIRLOCK_SECRET_WEB: 'short' });
  });

  it('refuses a server with both or neither transport, a duplicate name, a bad name or level', () => {
    refuses(
      `tools: { servers: [{ name: x, tools: {} }] }\n${agent('')}`,
      /tools\.servers\[0\].*exactly one of stdio and http/,
    );
    refuses(
      `tools: { servers: [{ name: x, stdio: { command: a }, http: { url: 'https://a.example/' } }] }\n${agent('')}`,
      /exactly one/,
    );
    refuses(
      `tools: { servers: [{ name: x, stdio: { command: a } }, { name: x, stdio: { command: b } }] }\n${agent('')}`,
      /tools\.servers\[1\]\.name.*used twice/,
    );
    refuses(
      `tools: { servers: [{ name: 'Bad Name', stdio: { command: a } }] }\n${agent('')}`,
      /tools\.servers\[0\]\.name/,
    );
    refuses(
      `tools: { servers: [{ name: x, stdio: { command: a }, tools: { t: { level: L5 } } }] }\n${agent('')}`,
      /tools\.servers\[0\]\.tools\.t\.level/,
    );
    refuses(
      `tools: { servers: [{ name: x, stdio: { command: a }, shell: true }] }\n${agent('')}`,
      /shell.*not a known setting/,
    );
  });
});
