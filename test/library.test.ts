/** The public library entry: a gateway with a backend written by the user. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createGateway, parseConfig, silentLogger, textOf, type AgentBackend } from '../src/index.js';

it('runs a gateway whose agent is a backend written against the public API', async () => {
  const config = parseConfig(
    `
agents:
  - slug: shout
    name: Shout
    description: Shouts.
    skills: [{ id: shout, name: Shout, description: Upper-cases text }]
    backend: { type: echo }
clients:
  - { id: me, token: "\${TOKEN}", agents: [shout] }
server: { port: 0 }
`,
    { TOKEN: 'library-test-token-0123456789abcdefghij' },
  );
  const shout: AgentBackend = {
    kind: 'shout',
    async *run(turn) {
      yield { type: 'text', text: textOf(turn.message).toUpperCase(), last: true };
      yield { type: 'completed' };
    },
  };
  const gateway = createGateway(config, { logger: silentLogger, backends: { shout } });
  const url = await gateway.listen();
  try {
    const response = await fetch(`${url}/a2a/shout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer library-test-token-0123456789abcdefghij' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { kind: 'message', role: 'user', messageId: 'm', parts: [{ kind: 'text', text: 'hi' }] } },
      }),
    });
    const body = (await response.json()) as any;
    assert.equal(body.result.artifacts[0].parts[0].text, 'HI');
  } finally {
    await gateway.close();
  }
});
