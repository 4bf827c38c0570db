/**
 * The outbound client's wiring and rules that need no SDK peer: `createOutboundClient`
 * (registry, env settings through src/net, pin and audit files), task ownership (getTask and
 * follow-ups only on the caller's own remote tasks, otherwise exactly `task_not_found` without
 * a request), the file ledger the CLI uses, and the `agents` / `send` commands in-process
 * (exit codes, the 5 s card cap, TTY-only progress).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AuditEvent } from '../src/audit/events.js';
import {
  FileOutboundLedger,
  MemoryOutboundLedger,
  RegistryError,
  cardTrustEntry,
  createClient,
  createOutboundClient,
  loadRegistryFile,
  mirrorTask,
  parseRegistry,
  pinsPathFrom,
  type OutboundLedger,
} from '../src/client/index.js';
import {
  loopbackTransport,
  makeTask,
  startFakeRemote,
  stubCards,
  type FakeRemote,
} from '../src/client/fake-remote.test.js';
import { agentsCommand, AGENT_CHECK_TIMEOUT_MS } from '../src/cli/agents.js';
import type { CommandIO } from '../src/cli/registry.js';
import { exitCodeOf, sendCommand } from '../src/cli/send.js';
import { A2AError } from '../src/protocol/errors.js';
import { parseEnvSettings } from '../src/net/index.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'airlock-outbound-client-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function registryFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const ONE_AGENT = `agents:
  - name: travel
    card_url: https://travel.example.com/.well-known/agent-card.json
    description: Books trains.
    effect: read_only
`;

describe('createOutboundClient: settings', () => {
  it('needs a registry: --registry wins over AIRLOCK_REGISTRY, and neither is an error', async () => {
    assert.throws(
      () => createOutboundClient({ env: {} }),
      (error: unknown) =>
        error instanceof RegistryError &&
        error.message === 'registry: no registry: pass --registry FILE or set AIRLOCK_REGISTRY',
    );
    const fromEnv = registryFile('env.yaml', ONE_AGENT);
    const fromOption = registryFile('option.yaml', ONE_AGENT.replaceAll('travel', 'hotel'));
    const a = createOutboundClient({ env: { AIRLOCK_REGISTRY: fromEnv }, pinsPath: join(dir, 'p.json') });
    const b = createOutboundClient({
      registryPath: fromOption,
      env: { AIRLOCK_REGISTRY: fromEnv },
      pinsPath: join(dir, 'p.json'),
    });
    assert.deepEqual(a.registry.names(), ['travel']);
    assert.deepEqual(b.listAgents(), [
      { name: 'hotel', description: 'Books trains.', effect: 'read_only', skills: [] },
    ]);
    await Promise.all([a.close(), b.close()]);
  });

  it('keeps pins in --pins, else AIRLOCK_PINS, else .airlock/pins.json', async () => {
    assert.equal(pinsPathFrom(undefined, {}), resolve('.airlock/pins.json'));
    assert.equal(pinsPathFrom(undefined, { AIRLOCK_PINS: join(dir, 'x.json') }), join(dir, 'x.json'));
    assert.equal(pinsPathFrom(join(dir, 'y.json'), { AIRLOCK_PINS: join(dir, 'x.json') }), join(dir, 'y.json'));
    const runtime = createOutboundClient({
      registryPath: registryFile('pins.yaml', ONE_AGENT),
      env: { AIRLOCK_PINS: join(dir, 'state', 'pins.json') },
    });
    assert.equal(runtime.pinsPath, join(dir, 'state', 'pins.json'));
    assert.equal(runtime.pins.path, join(dir, 'state', 'pins.json'));
    await runtime.close();
  });

  it('reads AIRLOCK_PRIVATE_ALLOW and AIRLOCK_EGRESS_PROXY with the transport’s parser and its messages', () => {
    const path = registryFile('net.yaml', ONE_AGENT);
    const bad = { AIRLOCK_PRIVATE_ALLOW: '10.0.0.0/8, *.corp' };
    const transportMessage = (() => {
      try {
        parseEnvSettings(bad);
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    assert.match(transportMessage, /^AIRLOCK_PRIVATE_ALLOW: "\*\.corp" is not a host name, IP address or CIDR range$/);
    assert.throws(
      () => createOutboundClient({ registryPath: path, env: bad }),
      (error: unknown) => error instanceof RegistryError && error.message === `registry: ${transportMessage}`,
    );
    for (const value of [
      'http://bob:hunter2pass@proxy:3128/path',
      'bob:hunter2pass@proxy:3128',
      'socks5://bob:hunter2pass@p',
    ]) {
      assert.throws(
        () => createOutboundClient({ registryPath: path, env: { AIRLOCK_EGRESS_PROXY: value } }),
        (error: unknown) =>
          error instanceof RegistryError &&
          error.message.startsWith('registry: AIRLOCK_EGRESS_PROXY: "') &&
          !error.message.includes('hunter2pass') &&
          !error.message.includes('bob'),
      );
    }
    // What the registry accepts, the transport accepts: a host name as written.
    const env = { AIRLOCK_PRIVATE_ALLOW: 'W.Corp, 10.20.0.0/16' };
    const registry = parseRegistry(ONE_AGENT, env);
    assert.deepEqual(registry.network.privateAllow, parseEnvSettings(env).privateAllow);
  });

  it('refuses an unreadable AIRLOCK_CA_FILE, naming the variable', () => {
    assert.throws(
      () =>
        createOutboundClient({
          registryPath: registryFile('ca.yaml', ONE_AGENT),
          env: { AIRLOCK_CA_FILE: join(dir, 'missing.pem') },
          pinsPath: join(dir, 'p.json'),
        }),
      /^Error: AIRLOCK_CA_FILE: cannot read .*missing\.pem \(ENOENT\)$/,
    );
  });

  it('examples/registry.yaml is a valid registry (given its secrets and AIRLOCK_PRIVATE_ALLOW)', () => {
    const env = {
      AIRLOCK_SECRET_WEATHER: 'weather-token-0123456789',
      AIRLOCK_SECRET_TRAVEL: 'travel-token-0123456789',
      AIRLOCK_PRIVATE_ALLOW: 'wiki.corp.internal,10.20.0.0/16',
    };
    const registry = loadRegistryFile('examples/registry.yaml', env);
    assert.deepEqual(
      registry.entries().map((entry) => [entry.name, entry.effect, entry.privateNetwork]),
      [
        ['weather', 'read_only', false],
        ['travel', 'acting', false],
        ['wiki', 'read_only', true],
      ],
    );
    assert.throws(
      () => loadRegistryFile('examples/registry.yaml', { ...env, AIRLOCK_PRIVATE_ALLOW: '' }),
      /agents\[2\] "wiki": private_network: needs AIRLOCK_PRIVATE_ALLOW/,
    );
    assert.throws(
      () => loadRegistryFile('examples/registry.yaml', { ...env, AIRLOCK_SECRET_TRAVEL: undefined }),
      /agents\[1\] "travel": auth\.bearer_env: environment variable AIRLOCK_SECRET_TRAVEL is not set/,
    );
  });

  it('clamps card fetches to a cap and passes the entry’s network setting', () => {
    const entry = parseRegistry(ONE_AGENT).get('travel');
    const capped = cardTrustEntry(entry, { capMs: AGENT_CHECK_TIMEOUT_MS });
    assert.deepEqual(capped.timeouts, { connectMs: 5000, readMs: 5000, totalMs: 5000 });
    assert.equal(capped.maxCardBytes, 256 * 1024);
    assert.equal(capped.privateNetwork, false);
    assert.equal(capped.cardRefreshS, 300);
    assert.deepEqual(cardTrustEntry(entry).timeouts, entry.timeouts);
  });
});

// ---------------------------------------------------------------------------------------------
// Ownership

describe('task ownership', () => {
  let remote: FakeRemote;
  const REGISTRY = (url: string) =>
    parseRegistry(`agents:
  - name: reader
    card_url: ${new URL('/.well-known/agent-card.json', url).href}
    description: Reads.
    effect: read_only
`);

  before(async () => {
    remote = await startFakeRemote((request) => {
      if (request.method === 'send') {
        if (request.params.message.taskId === 'gone') throw new A2AError('TASK_NOT_FOUND');
        return {
          send: { kind: 'task', task: makeTask('t-alice', 'input-required', undefined, { statusText: 'When?' }) },
        };
      }
      if (request.method === 'get') {
        if (request.params.id === 'gone') throw new A2AError('TASK_NOT_FOUND');
        return { task: makeTask(request.params.id, 'input-required', undefined, { statusText: 'When?' }) };
      }
      throw new A2AError('UNSUPPORTED_OPERATION');
    });
  });
  after(() => remote.close());

  function setup(ledger: OutboundLedger = new MemoryOutboundLedger()) {
    const audit: AuditEvent[] = [];
    const logs: string[] = [];
    const cards = stubCards(remote.url, '1.0');
    const client = createClient({
      registry: REGISTRY(remote.url),
      transport: loopbackTransport(),
      cards,
      ledger,
      audit: (event) => void audit.push(event),
      log: (event) => logs.push(event),
    });
    return { client, audit, logs, cards, ledger };
  }

  it("getTask and follow-ups work only on the caller's own tasks", async () => {
    const { client } = setup();
    const mine = await client.send({ agent: 'reader', message: 'Book', principalKey: 'client:alice::' });
    assert.equal(mine.task_id, 't-alice');
    const requests = remote.requests.length;
    const bob = await client.getTask({ agent: 'reader', taskId: 't-alice', principalKey: 'client:bob::' });
    const bobFollowUp = await client.send({
      agent: 'reader',
      message: 'Friday',
      taskId: 't-alice',
      principalKey: 'client:bob::',
    });
    const local = await client.getTask({ agent: 'reader', taskId: 't-alice' });
    assert.equal(remote.requests.length, requests, 'the remote was not contacted');
    for (const result of [bob, bobFollowUp, local]) assert.equal(result.error_type, 'task_not_found');
    const alice = await client.getTask({ agent: 'reader', taskId: 't-alice', principalKey: 'client:alice::' });
    assert.equal(alice.status, 'input_required');
    assert.equal(remote.requests.length, requests + 1);
  });

  it("answers someone else's task exactly as the remote answers an unknown one", async () => {
    const ledger = new MemoryOutboundLedger();
    // `gone` was started by this caller, but the remote no longer knows it.
    ledger.record('client:local::', mirrorTask({ agent: 'reader', remoteTaskId: 'gone', state: 'working', now: 0 }));
    const { client, audit, cards } = setup(ledger);
    const remoteGet = await client.getTask({ agent: 'reader', taskId: 'gone' });
    const remoteSend = await client.send({ agent: 'reader', message: 'hi', taskId: 'gone' });
    const resolvedBefore = cards.resolved.length;
    const requests = remote.requests.length;
    const localGet = await client.getTask({ agent: 'reader', taskId: 'notmine' });
    const localSend = await client.send({ agent: 'reader', message: 'hi', taskId: 'notmine' });
    assert.equal(remote.requests.length, requests, 'no request');
    assert.equal(cards.resolved.length, resolvedBefore, 'not even the card');

    assert.deepEqual({ ...localGet, task_id: 'gone' }, remoteGet);
    assert.equal(localGet.task_id, 'notmine');
    assert.deepEqual(localSend, remoteSend);
    const strip = (event: AuditEvent) => ({ ...event, time: '-', taskId: '-' });
    assert.deepEqual(strip(audit[2]!), strip(audit[0]!), 'the same get row');
    assert.deepEqual(strip(audit[3]!), strip(audit[1]!), 'the same send row');
  });

  it('fails closed when the ledger cannot answer', async () => {
    const { client, logs } = setup({
      record: () => undefined,
      get: () => {
        throw new Error('ledger down');
      },
    });
    const requests = remote.requests.length;
    const result = await client.getTask({ agent: 'reader', taskId: 't-alice' });
    assert.equal(result.error_type, 'task_not_found');
    assert.equal(remote.requests.length, requests);
    assert.ok(logs.includes('a2a.client.ledger_failed'));
  });
});

describe('FileOutboundLedger', () => {
  it('keeps mirrors across instances, per owner, bounded, in a 0600 file', async () => {
    const path = join(dir, 'ledger', 'outbound-tasks.json');
    const first = new FileOutboundLedger(path, { maxTasks: 3 });
    const mirror = (id: string) => mirrorTask({ agent: 'reader', remoteTaskId: id, state: 'working', now: 0 });
    await Promise.all([first.record('alice', mirror('t1')), first.record('bob', mirror('t2'))]);
    const second = new FileOutboundLedger(path, { maxTasks: 3 });
    assert.equal((await second.get('alice', 'a2a-out-reader.t1'))?.metadata?.remoteTaskId, 't1');
    assert.equal(await second.get('bob', 'a2a-out-reader.t1'), undefined);
    await second.record('alice', mirror('t3'));
    await second.record('alice', mirror('t4'));
    assert.deepEqual(
      (await second.list('alice')).map((task) => task.id),
      ['a2a-out-reader.t3', 'a2a-out-reader.t4'],
      'the oldest row went first',
    );
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.ok(!readFileSync(path, 'utf8').includes('history":[{'), 'ids and state only');
  });

  it('refuses a file that is not a ledger (and ownership then fails closed)', async () => {
    const path = join(dir, 'broken-ledger.json');
    writeFileSync(path, '{"version":1,"tasks":[{"owner":"a"}]}');
    await assert.rejects(new FileOutboundLedger(path).get('a', 'x'), /is not valid: row 0 is malformed/);
  });
});

// ---------------------------------------------------------------------------------------------
// Commands in-process

function captureIO(env: NodeJS.ProcessEnv, isTTY = false): CommandIO & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    isTTY,
    env,
    stdout: (text: string) => void (io.out += text),
    stderr: (text: string) => void (io.err += text),
  };
  return io;
}

describe('CLI commands (in-process)', () => {
  let silent: Server;
  let refusing: Server;
  let registry: string;

  before(async () => {
    // One server that accepts and never answers; one that answers 404 to everything.
    silent = createServer(() => undefined);
    refusing = createServer((_req, res) => {
      res.writeHead(404).end();
    });
    await Promise.all(
      [silent, refusing].map((server) => new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready))),
    );
    const port = (server: Server) => (server.address() as AddressInfo).port;
    registry = registryFile(
      'cli.yaml',
      `agents:
  - name: silent
    card_url: http://127.0.0.1:${port(silent)}/.well-known/agent-card.json
    description: Never answers.
    effect: read_only
  - name: missing
    card_url: http://127.0.0.1:${port(refusing)}/.well-known/agent-card.json
    description: Has no card.
    effect: acting
`,
    );
  });
  after(() => {
    for (const server of [silent, refusing]) {
      server.closeAllConnections();
      server.close();
    }
  });

  it('exit codes of results', () => {
    assert.equal(exitCodeOf({ status: 'success' }), 0);
    assert.equal(exitCodeOf({ status: 'input_required' }), 3);
    assert.equal(exitCodeOf({ status: 'error' }), 1);
  });

  it(
    'agents: resolves every card at once, each within 5 s, and exits 1 when one fails',
    { timeout: 15_000 },
    async () => {
      const io = captureIO({ AIRLOCK_REGISTRY: registry, AIRLOCK_PINS: join(dir, 'cli-pins.json') });
      const started = Date.now();
      const code = await agentsCommand({ json: true }, io);
      const elapsed = Date.now() - started;
      assert.equal(code, 1);
      assert.ok(elapsed >= AGENT_CHECK_TIMEOUT_MS - 100 && elapsed < AGENT_CHECK_TIMEOUT_MS + 3000, `${elapsed} ms`);
      const rows = JSON.parse(io.out) as { name: string; status: string; error_type: string; reason: string }[];
      assert.deepEqual(
        rows.map((row) => [row.name, row.status, row.error_type]),
        [
          ['silent', 'error', 'request_timeout'],
          ['missing', 'error', 'card_invalid'],
        ],
      );
      assert.match(rows[1]!.reason, /answered HTTP 404/);
      assert.equal(io.err, '', 'no progress when stderr is not a terminal');
    },
  );

  it('shows progress on stderr only on a terminal, and clears it', { timeout: 15_000 }, async () => {
    const io = captureIO({ AIRLOCK_PINS: join(dir, 'cli-pins.json') }, true);
    const code = await sendCommand({ agent: 'missing', text: 'hi', confirm: true, json: false, registry }, io);
    assert.equal(code, 1);
    assert.ok(io.err.startsWith('\r\x1b[Kairlock: calling missing…'), JSON.stringify(io.err));
    assert.ok(io.err.includes('\r\x1b[Kairlock: card_invalid: '), JSON.stringify(io.err));
    assert.equal(io.out, 'status: error\n');
  });

  it('send: refuses an acting entry without --confirm before any request', async () => {
    const io = captureIO({ AIRLOCK_REGISTRY: registry, AIRLOCK_PINS: join(dir, 'cli-pins.json') });
    const code = await sendCommand({ agent: 'missing', text: 'hi', confirm: false, json: true }, io);
    assert.equal(code, 1);
    assert.equal(JSON.parse(io.out).error_type, 'confirmation_required');
    assert.equal(io.err.split('\n').length, 2, 'one line');
  });
});
