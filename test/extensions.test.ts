/**
 * A2A extensions against a real gateway on loopback (§3.2.6, §4.6): an agent declares them in
 * `agents[].extensions`; its cards (v1.0 and v0.3, public and extended) list them under
 * `capabilities.extensions`, covered by the card signature; a request lists the ones it wants
 * in `A2A-Extensions` (v0.3: `X-A2A-Extensions`), the declared ones are echoed in the same
 * header (JSON and SSE answers alike), an undeclared one is ignored, and a required one not
 * listed refuses the request with -32008 (HTTP+JSON: 400 FAILED_PRECONDITION), audited as
 * `a2a.task.rejected` / `extension_required`. Over JSON-RPC v1.0, JSON-RPC v0.3 and HTTP+JSON.
 * The configuration is checked at load (URI form, duplicates, count, `params` size).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryAuditSink } from '../src/audit/index.js';
import { ConfigError } from '../src/config/errors.js';
import { parseConfig } from '../src/config/load.js';
import { encodeCardV03, encodeCardV10 } from '../src/protocol/card.js';
import { buildAgentCard } from '../src/server/cards.js';
import {
  generateSigningKey,
  importKeySet,
  importSigningKey,
  signCard,
  verifyCardSignatures,
} from '../src/trust/signing/index.js';
import {
  rpc,
  startGateway,
  TOKEN_A,
  TOKEN_B,
  TOKEN_C,
  v03Message,
  v10Message,
  type TestGateway,
} from './helpers/gateway.js';

const REQUIRED = 'https://ext.example/required/v1';
const OPTIONAL = 'urn:example:optional';
const UNDECLARED = 'https://elsewhere.example/not-declared';

const YAML = `
server: { host: 127.0.0.1, port: 0 }
agents:
  - slug: ext
    name: Extended
    description: Needs an extension.
    skills: [{ id: echo, name: Echo, description: Echoes text, tags: [demo] }]
    backend: { type: echo }
    extensions:
      - { uri: "${REQUIRED}", description: Replies carry citations., required: true, params: { style: short, depth: 2 } }
      - { uri: "${OPTIONAL}" }
  - slug: opt
    name: Optional
    description: Offers an extension.
    skills: [{ id: echo, name: Echo, description: Echoes text, tags: [demo] }]
    backend: { type: echo }
    extensions: [{ uri: "${OPTIONAL}", required: false }]
  - slug: plain
    name: Plain
    description: Declares none.
    skills: [{ id: echo, name: Echo, description: Echoes text, tags: [demo] }]
    backend: { type: echo }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [ext, opt, plain] }
`;

let gw: TestGateway;
let sink: MemoryAuditSink;
let ext: string;
let opt: string;
let plain: string;

before(async () => {
  sink = new MemoryAuditSink();
  gw = await startGateway(YAML, { auditSink: sink });
  ext = `${gw.url}/a2a/ext`;
  opt = `${gw.url}/a2a/opt`;
  plain = `${gw.url}/a2a/plain`;
});
after(() => gw.close());

/** One streaming call (JSON-RPC or HTTP+JSON), read to its end. */
async function streamCall(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN_A}`, accept: 'text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** One HTTP+JSON call at v1.0. */
async function rest(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${TOKEN_A}`,
      'a2a-version': '1.0',
      accept: 'application/a2a+json',
      ...(body !== undefined && { 'content-type': 'application/a2a+json' }),
      ...headers,
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text.length > 0 ? JSON.parse(text) : undefined };
}

/** The rejected rows with `extension_required` written so far. */
function extensionRefusals(): number {
  return sink.events.filter((row) => row.type === 'a2a.task.rejected' && row.reason === 'extension_required').length;
}

describe('JSON-RPC v1.0', () => {
  it('a required extension not requested: -32008 with the call id, audited', async () => {
    const before = extensionRefusals();
    const answer = await rpc(ext, 'SendMessage', { message: v10Message('hi') }, { version: '1.0', id: 41 });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.id, 41);
    assert.equal(answer.body.error?.code, -32008, JSON.stringify(answer.body));
    assert.match(answer.body.error.message, /https:\/\/ext\.example\/required\/v1/);
    assert.equal(answer.headers.get('a2a-extensions'), null);
    assert.equal(extensionRefusals(), before + 1);
    const row = sink.events.findLast((r) => r.type === 'a2a.task.rejected');
    assert.deepEqual(
      { client: row?.client, agent: row?.agent, outcome: row?.outcome },
      { client: 'a', agent: 'ext', outcome: 'denied' },
    );
  });

  it('every method is refused alike (a read, not only a message)', async () => {
    const answer = await rpc(ext, 'GetTask', { id: 'no-such-task' }, { version: '1.0' });
    assert.equal(answer.body.error?.code, -32008);
  });

  it('requested: served, the activated set echoed in request order; an undeclared one is ignored', async () => {
    const answer = await rpc(
      ext,
      'SendMessage',
      { message: v10Message('hi') },
      { version: '1.0', headers: { 'a2a-extensions': `${UNDECLARED}, ${OPTIONAL},${REQUIRED}` } },
    );
    assert.equal(answer.body.error, undefined, JSON.stringify(answer.body));
    assert.ok(answer.body.result !== undefined);
    assert.equal(answer.headers.get('a2a-extensions'), `${OPTIONAL}, ${REQUIRED}`);
    assert.equal(answer.headers.get('x-a2a-extensions'), null);
  });

  it('a stream carries the echo on its SSE response', async () => {
    const answer = await streamCall(
      ext,
      { jsonrpc: '2.0', id: 3, method: 'SendStreamingMessage', params: { message: v10Message('s') } },
      { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': REQUIRED },
    );
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /text\/event-stream/);
    assert.equal(answer.headers.get('a2a-extensions'), REQUIRED);
    assert.doesNotMatch(answer.text, /-32008/);
  });

  it('a stream without the required extension is refused', async () => {
    const answer = await streamCall(
      ext,
      { jsonrpc: '2.0', id: 4, method: 'SendStreamingMessage', params: { message: v10Message('s') } },
      { 'content-type': 'application/json', 'a2a-version': '1.0' },
    );
    assert.match(answer.text, /-32008/);
  });
});

describe('JSON-RPC v0.3', () => {
  it('a required extension not requested: -32008 in the v0.3 shape', async () => {
    const answer = await rpc(ext, 'message/send', { message: v03Message('hi') }, { id: 'v03-1' });
    assert.equal(answer.body.id, 'v03-1');
    assert.equal(answer.body.error?.code, -32008, JSON.stringify(answer.body));
  });

  it('X-A2A-Extensions: served, echoed in X-A2A-Extensions', async () => {
    const answer = await rpc(
      ext,
      'message/send',
      { message: v03Message('hi') },
      { headers: { 'x-a2a-extensions': `${REQUIRED}, ${UNDECLARED}` } },
    );
    assert.equal(answer.body.error, undefined, JSON.stringify(answer.body));
    assert.equal(answer.body.result?.kind, 'task');
    assert.equal(answer.headers.get('x-a2a-extensions'), REQUIRED);
    assert.equal(answer.headers.get('a2a-extensions'), null);
  });

  it('the v1.0 spelling is read on a v0.3 call too, and echoed in it', async () => {
    const answer = await rpc(
      ext,
      'message/send',
      { message: v03Message('hi') },
      { headers: { 'a2a-extensions': REQUIRED } },
    );
    assert.equal(answer.body.error, undefined, JSON.stringify(answer.body));
    assert.equal(answer.headers.get('a2a-extensions'), REQUIRED);
  });
});

describe('HTTP+JSON', () => {
  it('a required extension not requested: 400 FAILED_PRECONDITION, EXTENSION_SUPPORT_REQUIRED', async () => {
    const before = extensionRefusals();
    const answer = await rest(`${ext}/message:send`, { message: v10Message('hi') });
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.error.status, 'FAILED_PRECONDITION');
    const info = answer.body.error.details.find((d: any) => String(d['@type']).endsWith('ErrorInfo'));
    assert.equal(info?.reason, 'EXTENSION_SUPPORT_REQUIRED');
    assert.equal(extensionRefusals(), before + 1);
  });

  it('a GET is refused alike', async () => {
    const answer = await rest(`${ext}/tasks/no-such-task`, undefined);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.status, 'FAILED_PRECONDITION');
  });

  it('requested: 200 with the echo; an undeclared one ignored', async () => {
    const answer = await rest(
      `${ext}/message:send`,
      { message: v10Message('hi') },
      { 'a2a-extensions': `${REQUIRED}, ${UNDECLARED}` },
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.headers.get('a2a-extensions'), REQUIRED);
  });

  it('message:stream carries the echo on its SSE response', async () => {
    const answer = await streamCall(
      `${ext}/message:stream`,
      { message: v10Message('s') },
      { 'content-type': 'application/a2a+json', 'a2a-version': '1.0', 'a2a-extensions': `${REQUIRED},${OPTIONAL}` },
    );
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.headers.get('a2a-extensions'), `${REQUIRED}, ${OPTIONAL}`);
  });
});

describe('agents without a required extension', () => {
  it('an agent that declares none ignores the header: served, nothing echoed (all bindings)', async () => {
    const headers = { 'a2a-extensions': REQUIRED, 'x-a2a-extensions': OPTIONAL };
    const v10 = await rpc(plain, 'SendMessage', { message: v10Message('hi') }, { version: '1.0', headers });
    assert.equal(v10.body.error, undefined);
    assert.equal(v10.headers.get('a2a-extensions'), null);
    assert.equal(v10.headers.get('x-a2a-extensions'), null);
    const v03 = await rpc(plain, 'message/send', { message: v03Message('hi') }, { headers });
    assert.equal(v03.body.error, undefined);
    assert.equal(v03.headers.get('x-a2a-extensions'), null);
    const restAnswer = await rest(`${plain}/message:send`, { message: v10Message('hi') }, headers);
    assert.equal(restAnswer.status, 200);
    assert.equal(restAnswer.headers.get('a2a-extensions'), null);
  });

  it('an optional extension: served without it, echoed when asked for', async () => {
    const without = await rpc(opt, 'SendMessage', { message: v10Message('hi') }, { version: '1.0' });
    assert.equal(without.body.error, undefined);
    assert.equal(without.headers.get('a2a-extensions'), null);
    const asked = await rpc(
      opt,
      'SendMessage',
      { message: v10Message('hi') },
      { version: '1.0', headers: { 'a2a-extensions': OPTIONAL } },
    );
    assert.equal(asked.headers.get('a2a-extensions'), OPTIONAL);
  });
});

describe('cards', () => {
  const declared = [
    { uri: REQUIRED, description: 'Replies carry citations.', required: true, params: { style: 'short', depth: 2 } },
    { uri: OPTIONAL, required: false },
  ];

  it('the public v1.0 and v0.3 cards list them under capabilities.extensions', async () => {
    const v10 = (await (
      await fetch(`${ext}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })
    ).json()) as any;
    assert.deepEqual(v10.capabilities.extensions, declared);
    const v03 = (await (await fetch(`${ext}/.well-known/agent-card.json`)).json()) as any;
    assert.equal(v03.protocolVersion, '0.3.0');
    assert.deepEqual(v03.capabilities.extensions, declared);
    const none = (await (
      await fetch(`${plain}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })
    ).json()) as any;
    assert.equal(none.capabilities.extensions, undefined);
  });

  it('the extended card lists them too (fetched with the extension, as the agent requires)', async () => {
    const card = await rpc(
      ext,
      'GetExtendedAgentCard',
      {},
      { version: '1.0', headers: { 'a2a-extensions': REQUIRED } },
    );
    assert.deepEqual(card.body.result.capabilities.extensions, declared);
  });

  it('the signature covers them: changing an extension breaks it (v1.0 and v0.3 shapes)', async () => {
    const generated = await generateSigningKey('ES256');
    const keys = importKeySet({ keys: [generated.publicJwk] });
    const agent = gw.config.agents.find((a) => a.slug === 'ext');
    assert.ok(agent !== undefined);
    const card = buildAgentCard(agent, ext, false);
    // A v0.3 card's own security members are outside the v1.0 projection: its check covers the interfaces.
    const shapes = [
      { encode: encodeCardV10, coverage: 'trust-fields' },
      { encode: encodeCardV03, coverage: 'interfaces' },
    ] as const;
    for (const { encode, coverage } of shapes) {
      const signed = signCard(encode(card), [importSigningKey(generated.privateJwk)]);
      const verdict = await verifyCardSignatures(JSON.stringify(signed), keys, { requireSigned: true, coverage });
      assert.equal(verdict.status, 'verified');
      const tampered = JSON.parse(JSON.stringify(signed));
      tampered.capabilities.extensions[0].required = false;
      await assert.rejects(
        verifyCardSignatures(JSON.stringify(tampered), keys, { requireSigned: true, coverage }),
        /no signature verifies/,
      );
      const dropped = JSON.parse(JSON.stringify(signed));
      delete dropped.capabilities.extensions;
      await assert.rejects(
        verifyCardSignatures(JSON.stringify(dropped), keys, { requireSigned: true, coverage }),
        /no signature verifies/,
      );
    }
  });
});

describe('configuration', () => {
  const env = { TOKEN_A, TOKEN_B, TOKEN_C };
  /** YAML with the `ext` agent's extensions replaced by `list`. */
  function withExtensions(list: string): string {
    return YAML.replace(/ {4}extensions:\n( {6}- .*\n)+/, `    extensions: ${list}\n`);
  }
  function problem(list: string): string {
    try {
      parseConfig(withExtensions(list), env);
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error));
      return error.message;
    }
    assert.fail('the config was accepted');
  }

  it('accepts https URLs and URNs', () => {
    const config = parseConfig(
      withExtensions(`[{ uri: "https://a.example/x?v=1" }, { uri: "urn:ietf:params:x" }]`),
      env,
    );
    assert.equal(config.agents[0]?.extensions?.length, 2);
  });

  const refusals: [string, string, RegExp][] = [
    [
      'http (not https)',
      `[{ uri: "http://a.example/x" }]`,
      /extensions\[0\]\.uri: must be an absolute https:\/\/ URL or a urn: name/,
    ],
    ['a relative URI', `[{ uri: "/ext/v1" }]`, /extensions\[0\]\.uri: must be an absolute/],
    ['a comma in the URI', `[{ uri: "https://a.example/x,y" }]`, /extensions\[0\]\.uri: must be an absolute/],
    ['a space in the URI', `[{ uri: "https://a.example/x y" }]`, /extensions\[0\]\.uri: must be an absolute/],
    [
      'a URI declared twice',
      `[{ uri: "urn:a:b" }, { uri: "urn:a:b" }]`,
      /extensions\[1\]\.uri: "urn:a:b" is declared twice/,
    ],
    ['an unknown key', `[{ uri: "urn:a:b", mandatory: true }]`, /extensions\[0\]\.mandatory: is not a known setting/],
    ['params not a mapping', `[{ uri: "urn:a:b", params: [1, 2] }]`, /extensions\[0\]\.params/],
    [
      'params over 4096 bytes',
      `[{ uri: "urn:a:b", params: { big: "${'x'.repeat(4100)}" } }]`,
      /params: must be at most 4096 bytes/,
    ],
    ['a URI over 512 characters', `[{ uri: "https://a.example/${'x'.repeat(520)}" }]`, /extensions\[0\]\.uri/],
    [
      'more than 16',
      `[${Array.from({ length: 17 }, (_, i) => `{ uri: "urn:a:${i}" }`).join(', ')}]`,
      /agents\[0\]\.extensions/,
    ],
  ];
  for (const [what, list, expected] of refusals) {
    it(`refuses ${what} in one line`, () => {
      const message = problem(list);
      assert.match(message, expected);
      assert.doesNotMatch(message, /\n/);
    });
  }
});
