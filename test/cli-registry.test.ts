/**
 * The registry commands as an operator runs them, against a card served on loopback:
 * `airlock agents` fits an 80-column terminal and keeps each reason whole; `airlock registry
 * pin` shows what changed in the trust fields, asks (or wants `--yes`) before pinning; a
 * registry file's problems are all reported in one run.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { registryPinCommand } from '../src/cli/registry.js';
import { encodeCardV10 } from '../src/protocol/card/encode.js';
import type { AgentCard } from '../src/protocol/model.js';
import { cardTrustDigest } from '../src/trust/index.js';
import { captureIO } from './helpers/command-io.js';
import { CLI } from './helpers/cli.js';

const LONG = 'travel-desk-europe-west';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function airlock(args: string[], cwd: string, env: Record<string, string>): Promise<Run> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('AIRLOCK_')));
  return new Promise((done, fail) => {
    // stdin, stdout and stderr are pipes: no terminal, as in a script.
    const child = spawn(process.execPath, [...CLI, ...args], { cwd, env: { ...inherited, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`airlock ${args.join(' ')} did not finish: ${stderr}`));
    }, 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

function cardAt(base: string, path: string, skills: AgentCard['skills']): AgentCard {
  return {
    name: 'Peer',
    description: 'A test peer.',
    version: '1.0.0',
    interfaces: [{ url: `${base}${path}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills,
  };
}

interface PinFile {
  pins: Record<string, { digest: string; source: string; pinnedAt: string; drift?: { digest: string } }>;
}

describe('registry commands against a card on loopback', () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-cli-registry-'));
  const pinsPath = join(dir, 'pins.json');
  const env = { AIRLOCK_REGISTRY: join(dir, 'registry.yaml'), AIRLOCK_PINS: pinsPath };
  const readPins = () => JSON.parse(readFileSync(pinsPath, 'utf8')) as PinFile;
  const book = { id: 'book', name: 'Book', description: 'Books trains.', tags: ['travel'] };
  let server: Server;
  let base = '';
  let card: AgentCard;
  let first: AgentCard;
  let second: AgentCard;

  before(async () => {
    server = createServer((request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(encodeCardV10(card)));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    first = cardAt(base, '/a2a', [book]);
    second = cardAt(base, '/a2a/v2', [book, { id: 'pay', name: 'Pay', description: 'Pays.', tags: ['travel'] }]);
    card = first;
    const entry = (name: string) =>
      `  - name: ${name}\n    card_url: ${base}/.well-known/agent-card.json\n    description: The peer.\n    effect: read_only\n`;
    writeFileSync(env.AIRLOCK_REGISTRY, `agents:\n${entry('peer')}${entry(LONG)}`);
  });
  after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('agents: the table fits 80 columns, and a locked entry keeps its whole reason and hint', async () => {
    const pinned = await airlock(['agents'], dir, env);
    assert.equal(pinned.code, 0, pinned.stderr);
    const short = cardTrustDigest(first).slice(0, 12);
    assert.deepEqual(pinned.stdout.split('\n'), [
      'NAME                     EFFECT     STATUS  DIGEST        PIN',
      `peer                     read_only  ok      ${short}  tofu`,
      `${LONG}  read_only  ok      ${short}  tofu`,
      '',
    ]);

    card = second;
    const locked = await airlock(['agents'], dir, env);
    assert.equal(locked.code, 1);
    const lines = locked.stdout.split('\n');
    for (const line of lines) assert.ok(line.length <= 80, `${line.length} columns: ${line}`);
    // STATUS is the column that gives: "error card_pin_mismatch" wraps at its space.
    assert.deepEqual(lines.slice(0, 3), [
      'NAME                     EFFECT     STATUS                  DIGEST  PIN',
      'peer                     read_only  error                   -       tofu (drift)',
      '                                    card_pin_mismatch',
    ]);
    const reason = (name: string) =>
      `agent card of registry entry "${name}": the card's trust digest changed from ${cardTrustDigest(first)} (tofu) to ${cardTrustDigest(second)}; the entry is disabled until an operator reviews the card and runs \`airlock registry pin ${name}\``;
    const reasonLines = lines.slice(
      3,
      lines.indexOf(`${LONG}  read_only  error                   -       tofu (drift)`),
    );
    assert.ok(reasonLines.every((line) => line.startsWith('  ')));
    assert.equal(reasonLines.map((line) => line.trim()).join(' '), reason('peer'));
    assert.ok(
      locked.stdout.replace(/\n +/g, ' ').includes(`runs \`airlock registry pin ${LONG}\``),
      'the hint at the end of the longest reason is there',
    );
  });

  it('registry pin: shows the changed trust fields, refuses without a terminal or --yes, pins with --yes', async () => {
    const before = readPins().pins.peer!;
    const changed = [
      `changed since the pin (tofu, ${before.pinnedAt}):`,
      `  digest        ${cardTrustDigest(first)}`,
      `             →  ${cardTrustDigest(second)}`,
      `  interface[0]  ${base}/a2a (JSONRPC 1.0)`,
      `             →  ${base}/a2a/v2 (JSONRPC 1.0)`,
      '  skill "pay"   (none) → "Pay", tags "travel"',
    ];

    const refused = await airlock(['registry', 'pin', 'peer'], dir, env);
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr,
      'airlock: not pinned: no terminal to confirm on; pass --yes to pin the card of "peer"\n',
    );
    assert.ok(refused.stdout.includes(`\n\n${changed.join('\n')}\n`), refused.stdout);
    assert.deepEqual(readPins().pins.peer, before, 'nothing was pinned');

    const pinned = await airlock(['registry', 'pin', 'peer', '--yes'], dir, env);
    assert.equal(pinned.code, 0, pinned.stderr);
    assert.ok(pinned.stdout.includes(`\n\n${changed.join('\n')}\n`), pinned.stdout);
    assert.ok(
      pinned.stdout.endsWith(
        `pinned    operator, in ${pinsPath}\nreplaces  the tofu pin of ${before.pinnedAt}; drift cleared\n`,
      ),
      pinned.stdout,
    );
    for (const line of pinned.stdout.split('\n')) assert.ok(line.length <= 80, line);
    const after = readPins().pins.peer!;
    assert.deepEqual([after.digest, after.source, after.drift], [cardTrustDigest(second), 'operator', undefined]);
  });

  it('registry pin on a terminal: asks, and pins only on yes', async () => {
    const questions: string[] = [];
    const ask = (answer: boolean) => {
      const io = captureIO(env);
      io.confirm = async (question) => {
        questions.push(question);
        return answer;
      };
      return io;
    };
    const declined = ask(false);
    assert.equal(await registryPinCommand(LONG, {}, declined), 1);
    assert.equal(declined.err, 'airlock: not pinned: not confirmed\n');
    assert.ok(readPins().pins[LONG]!.drift !== undefined, 'still locked');

    const accepted = ask(true);
    assert.equal(await registryPinCommand(LONG, {}, accepted), 0, accepted.err);
    assert.deepEqual(questions, [`pin this card for "${LONG}"? [y/N] `, `pin this card for "${LONG}"? [y/N] `]);
    assert.equal(readPins().pins[LONG]!.digest, cardTrustDigest(second));

    const again = captureIO(env);
    assert.equal(await registryPinCommand(LONG, {}, again), 0, 'nothing to confirm when nothing changed');
    assert.match(again.out, /^pinned {4}operator: the card matches its pin; nothing changed$/m);
  });

  it('a registry file with several problems: each on its own line, naming the entry and the key', async () => {
    writeFileSync(
      join(dir, 'bad.yaml'),
      `agents:
  - { name: a, card_url: "https://a.example/card", description: A, effect: maybe, colour: blue }
  - { name: b, card_url: "ftp://b.example/card", description: B, effect: read_only, auth: { bearer_env: AIRLOCK_SECRET_B } }
`,
    );
    const run = await airlock(['agents', '--registry', 'bad.yaml'], dir, env);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.equal(
      run.stderr,
      [
        'airlock: registry: 4 problems:',
        '  agents[0] "a": effect: must be read_only or acting',
        '  agents[0] "a": colour: is not a known setting',
        '  agents[1] "b": card_url: must be an https URL',
        '  agents[1] "b": auth.bearer_env: environment variable AIRLOCK_SECRET_B is not set',
        '',
      ].join('\n'),
    );
  });
});
