/**
 * Fault catalogue, the audit log: a gateway that cannot record what it does refuses to do it.
 * Once as `airlock serve` in a child process (startup, and a request end to end), once in
 * process with a counting backend and a logger the test reads.
 *
 * `/dev/full` opens fine and fails every write with ENOSPC, even for root (chmod would not stop
 * root, and these tests may run as root).
 *
 * | Fault                                               | Expected behaviour                                                                                                       | Asserted in                  |
 * | --------------------------------------------------- | ------------------------------------------------------------------------------------------------------------------------ | ---------------------------- |
 * | audit.file cannot be opened (its "directory" is a   | `airlock serve` exits 1 before listening: one stderr line "airlock: audit: cannot create the directory of <path>: EEXIST"| serve › refuses to start     |
 * | regular file)                                       |                                                                                                                          |                              |
 * | audit.file is /dev/full (every write fails), serve  | starts; SendMessage → -32603 "The request could not be recorded in the audit log; nothing was run"; the command backend   | serve › refuses work         |
 * |                                                     | never runs (its marker file is absent); stderr log has audit_write_failed for a2a.task.submitted                          |                              |
 * | same, in process: SendMessage / SendStreamingMessage | -32603 with that message (plain JSON, no stream opened); 0 backend turns; audit_write_failed (error level) per request   | in process › refuses work    |
 * | same, a refusal (bad token)                         | still refused (401); its unwritable row only logged (audit_write_failed, type a2a.server.auth_failed)                     | in process › refusal         |
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AgentBackend, AgentEvent } from '../../src/agents/backend.js';
import { rpc, rpcText, TOKEN_A, v10Message } from '../helpers/gateway.js';
import { BOUNDED, gatewayYaml, startFaultGateway, type FaultGateway } from './support.js';
import { CLI } from '../helpers/cli.js';

const v1 = { version: '1.0' };
const AUDIT_MESSAGE = 'The request could not be recorded in the audit log; nothing was run';

let scratch: string;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'airlock-faults-audit-'));
});

after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

interface Served {
  url: Promise<string>;
  exited: Promise<number | null>;
  stdout: () => string;
  stderr: () => string;
  kill(): Promise<void>;
}

/** `airlock serve --config <file>` in a child process, on a free loopback port. */
function serve(configPath: string): Served {
  const child = spawn(
    process.execPath,
    [...CLI, 'serve', '--config', configPath, '--port', '0', '--log-level', 'warn'],
    {
      cwd: scratch,
      env: { ...process.env, TOKEN_A },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const url = new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`no banner: ${out}${err}`)), 20_000);
    child.stdout.on('data', () => {
      const match = /airlock listening on (http:\/\/\S+)/.exec(out);
      if (match !== null) {
        clearTimeout(timer);
        done(match[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`exited (${code}): ${err}`));
    });
  });
  url.catch(() => undefined);
  return {
    url,
    exited,
    stdout: () => out,
    stderr: () => err,
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function serveYaml(auditFile: string, marker: string): string {
  const touch = `{ type: command, command: sh, args: [-c, 'echo ran > "$0"', ${JSON.stringify(marker)}], env: { PATH: /usr/bin:/bin } }`;
  return `${gatewayYaml({ marker: touch })}audit: { file: ${JSON.stringify(auditFile)} }\n`;
}

describe('fault: the audit file is unwritable, `airlock serve`', () => {
  it(
    'refuses to start when audit.file cannot be opened, with one clear line and exit 1',
    { timeout: 30_000 },
    async () => {
      const notADirectory = join(scratch, 'plain-file');
      await writeFile(notADirectory, 'not a directory');
      const auditFile = join(notADirectory, 'audit.jsonl');
      const configPath = join(scratch, 'unopenable.yaml');
      await writeFile(configPath, serveYaml(auditFile, join(scratch, 'never-ran')));
      const served = serve(configPath);
      const code = await served.exited;
      assert.equal(code, 1);
      assert.doesNotMatch(served.stdout(), /listening/, 'it never listened');
      const lines = served.stderr().trim().split('\n');
      assert.equal(lines.length, 1, served.stderr());
      assert.equal(lines[0], `airlock: audit: cannot create the directory of ${auditFile}: EEXIST`);
    },
  );

  it(
    'serves with audit.file /dev/full but runs nothing: -32603 about the audit log, the program never starts',
    { timeout: 30_000 },
    async () => {
      const marker = join(scratch, 'ran');
      const configPath = join(scratch, 'dev-full.yaml');
      await writeFile(configPath, serveYaml('/dev/full', marker));
      const served = serve(configPath);
      try {
        const url = await served.url;
        const { status, body } = await rpc(`${url}/a2a/marker`, 'SendMessage', { message: v10Message('hi') }, v1);
        assert.equal(status, 200);
        assert.equal(body.error.code, -32603);
        assert.equal(body.error.message, AUDIT_MESSAGE);
        assert.equal(existsSync(marker), false, 'the backend never ran');
        const logged = served
          .stderr()
          .split('\n')
          .filter((line) => line.includes('"audit_write_failed"'))
          .map((line) => JSON.parse(line));
        assert.ok(
          logged.some(
            (line) => line.type === 'a2a.task.submitted' && line.level === 'error' && /ENOSPC/.test(line.error),
          ),
          served.stderr(),
        );
      } finally {
        await served.kill();
      }
    },
  );
});

describe('fault: the audit file is unwritable, in process', () => {
  let gw: FaultGateway;
  let turns = 0;
  const counting: AgentBackend = {
    kind: 'counting',
    async *run(): AsyncGenerator<AgentEvent> {
      turns += 1;
      yield { type: 'completed', text: 'ran' };
    },
  };

  before(async () => {
    gw = await startFaultGateway(`${gatewayYaml({ counted: '{ type: echo }' })}audit: { file: /dev/full }\n`, {
      given: { counted: counting },
    });
  });

  after(async () => {
    await gw.close();
  });

  it(
    'SendMessage and SendStreamingMessage answer -32603 about the audit log; the backend never runs',
    BOUNDED,
    async () => {
      const sent = await rpc(gw.agent('counted'), 'SendMessage', { message: v10Message('hi') }, v1);
      assert.equal(sent.status, 200);
      assert.equal(sent.body.error.code, -32603);
      assert.equal(sent.body.error.message, AUDIT_MESSAGE);

      const streamed = await rpcText(
        gw.agent('counted'),
        'SendStreamingMessage',
        { message: v10Message('hi') },
        { ...v1, headers: { accept: 'text/event-stream' } },
      );
      assert.equal(streamed.status, 200);
      assert.match(streamed.headers.get('content-type') ?? '', /^application\/json/, 'no stream was opened');
      const streamError = JSON.parse(streamed.text).error;
      assert.equal(streamError.code, -32603);
      assert.equal(streamError.message, AUDIT_MESSAGE);

      assert.equal(turns, 0, 'the backend never ran');
      const failed = gw.logger.events('audit_write_failed').filter((line) => line.type === 'a2a.task.submitted');
      assert.equal(failed.length, 2);
      assert.ok(failed.every((line) => line.level === 'error' && /ENOSPC/.test(String(line.error))));
    },
  );

  it('a refusal is still a refusal: a bad token gets 401, its unwritable row goes to the log', BOUNDED, async () => {
    const refused = await rpc(
      gw.agent('counted'),
      'SendMessage',
      { message: v10Message('hi') },
      {
        ...v1,
        token: 'wrong-token-0123456789abcdef0123456789',
      },
    );
    assert.equal(refused.status, 401);
    assert.ok(gw.logger.events('audit_write_failed').some((line) => line.type === 'a2a.server.auth_failed'));
    assert.equal(turns, 0);
  });
});
