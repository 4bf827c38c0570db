/**
 * examples/approvals.yaml as shipped (only the port and the audit file moved): the deployer
 * parks its task, alice approves with `airlock approvals`, and the next message deploys.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { approvalsDecideCommand, approvalsListCommand } from '../src/cli/approvals.js';
import { banner } from '../src/cli/serve.js';
import { parseConfig } from '../src/config/load.js';
import { prepareBackends, type PreparedBackends } from '../src/server/backends.js';
import { silentLogger } from '../src/server/log.js';
import { captureIO } from './helpers/command-io.js';
import { rpc, startGateway, type TestGateway } from './helpers/gateway.js';

const DEMO = 'demo-client-token-0123456789abcdef012345';
const ALICE = 'alice-person-token-0123456789abcdef01234';

describe('examples/approvals.yaml', () => {
  let dir: string;
  let gateway: TestGateway;
  let backends: PreparedBackends;
  const env = { AIRLOCK_DEMO_TOKEN: DEMO, AIRLOCK_ALICE_TOKEN: ALICE };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airlock-approvals-example-'));
    const shipped = await readFile('examples/approvals.yaml', 'utf8');
    const yaml = shipped
      .replace(/^ {2}port: \d+$/m, '  port: 0')
      .replace(/^audit: .*$/m, `audit: { file: '${join(dir, 'audit.jsonl')}' }`);
    assert.notEqual(yaml, shipped);
    const config = parseConfig(yaml, env);
    backends = await prepareBackends(config, { logger: silentLogger });
    gateway = await startGateway(yaml, { env, backends: backends.bySlug });
  });
  after(async () => {
    await gateway.close();
    await backends.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'parks the deployment, alice approves it from the CLI, the next message deploys',
    { timeout: 15_000 },
    async () => {
      const endpoint = `${gateway.url}/a2a/deployer`;
      const message = (text: string, taskId?: string) => ({
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...(taskId && { taskId }) },
      });
      const parked = (await rpc(endpoint, 'SendMessage', message('web'), { token: DEMO, version: '1.0' })).body.result
        .task;
      assert.equal(parked.status.state, 'TASK_STATE_INPUT_REQUIRED');
      const action = parked.status.message.parts.find((part: { data?: unknown }) => part.data !== undefined).data;
      assert.deepEqual(action.args, { service: 'web', environment: 'production' });

      const list = captureIO({ AIRLOCK_PERSON_TOKEN: ALICE });
      assert.equal(await approvalsListCommand({ url: gateway.url }, list), 0);
      assert.ok(list.out.includes(action.action_id), list.out);
      const approve = captureIO({ AIRLOCK_PERSON_TOKEN: ALICE });
      assert.equal(await approvalsDecideCommand('approve', action.action_id, { url: gateway.url }, approve), 0);

      const done = (await rpc(endpoint, 'SendMessage', message('go', parked.id), { token: DEMO, version: '1.0' })).body
        .result.task;
      assert.equal(done.status.state, 'TASK_STATE_COMPLETED');
      assert.equal(done.status.message.parts[0].text, 'Deployed web (approved by person:alice).');
    },
  );
});

describe('the banner tells people where the approvals are and where their token is', () => {
  it('prints the console URL and, per person, where the token comes from (never the token)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'airlock-banner-'));
    try {
      const shipped = await readFile('examples/approvals.yaml', 'utf8');
      const fromEnv = parseConfig(shipped, { AIRLOCK_DEMO_TOKEN: DEMO, AIRLOCK_ALICE_TOKEN: ALICE });
      const text = banner(fromEnv, 'http://127.0.0.1:41245');
      assert.match(
        text,
        /^approvals: the console at http:\/\/127\.0\.0\.1:41245\/console \(each person signs in with their own token\)$/m,
      );
      assert.match(text, /^ {2}person alice: token in \$AIRLOCK_ALICE_TOKEN$/m);
      assert.ok(!text.includes(ALICE), 'the token itself is never printed');
      const aliceFile = join(dir, 'alice-token');
      const fromFile = parseConfig(shipped.replaceAll('.airlock/alice-token', aliceFile), { AIRLOCK_DEMO_TOKEN: DEMO });
      assert.match(
        banner(fromFile, 'http://127.0.0.1:41245'),
        new RegExp(
          `^ {2}person alice: token generated into ${aliceFile.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`,
          'm',
        ),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
