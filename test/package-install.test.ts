/**
 * Airlock as a dependency: the package `npm pack` makes installs into an empty project, where
 * `npx airlock --help` runs and the README's library example (a gateway with a backend written
 * in code) answers a call. The build goes to a staging folder (never the working tree's
 * `dist/`, which other runs may be using), beside a copy of what `files` names, so the
 * tarball holds exactly what a publish from a clean checkout would.
 *
 * The install reads the npm cache first (`--prefer-offline`) and the registry for anything
 * missing; it is the slow part (see INSTALL_LIMIT), hence the steps' own limits.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPO = resolve('.');
const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NPX = process.platform === 'win32' ? 'npx.cmd' : 'npx';
/**
 * Each step's limit. The install runs better-sqlite3's install script (`prebuild-install ||
 * node-gyp rebuild`): see {@link localPrebuild}; without it, a native build can take minutes.
 */
const BUILD_LIMIT = { timeout: 180_000 };
const INSTALL_LIMIT = { timeout: 360_000 };
const RUN_LIMIT = { timeout: 60_000 };

/** An empty project, allowing the one install script the package's dependencies have (as the README says). */
const CONSUMER_MANIFEST = { name: 'consumer', private: true, type: 'module', allowScripts: { 'better-sqlite3': true } };

/** The README's library example, as an ESM script that also calls the agent once and stops. */
const LIBRARY_EXAMPLE = `
import { createGateway, parseConfig, createLogger, textOf } from 'a2a-airlock';

const yamlText = \`
agents:
  - slug: shout
    name: Shout
    description: Shouts.
    skills: [{ id: shout, name: Shout, description: Upper-cases text }]
    backend: { type: echo }
clients:
  - { id: me, token: "\\\${TOKEN}", agents: [shout] }
server: { port: 0 }
\`;
const TOKEN = 'package-install-token-0123456789abcdef';

const shout = {
  kind: 'shout',
  async *run(turn) {
    yield { type: 'text', text: textOf(turn.message).toUpperCase(), last: true };
    yield { type: 'completed' };
  },
};
const gateway = createGateway(parseConfig(yamlText, { TOKEN }), { logger: createLogger('silent'), backends: { shout } });
const url = await gateway.listen();
try {
  const response = await fetch(\`\${url}/a2a/shout\`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: \`Bearer \${TOKEN}\` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'the sea' }] } },
    }),
  });
  const body = await response.json();
  console.log(body.result.artifacts[0].parts[0].text);
} finally {
  await gateway.close();
}
`;

/** The same example in TypeScript, as the README writes it: the package's types must carry it. */
const TYPED_EXAMPLE = `
import { createGateway, parseConfig, createLogger, textOf, type AgentBackend } from 'a2a-airlock';

declare const yamlText: string;
const shout: AgentBackend = {
  kind: 'shout',
  async *run(turn) {
    yield { type: 'text', text: textOf(turn.message).toUpperCase(), last: true };
    yield { type: 'completed' };
  },
};
const gateway = createGateway(parseConfig(yamlText), { logger: createLogger(), backends: { shout } });
export const listening: Promise<string> = gateway.listen();
`;

/**
 * better-sqlite3's install script looks for a prebuilt binary in a local folder before it
 * downloads one from GitHub (prebuild-install's `local-prebuilds`), and compiles only when
 * both fail. The binary this checkout already has (same version, same Node ABI) is offered
 * there, packed as a release asset is, so the install does not depend on GitHub being
 * reachable nor on a two-core machine compiling SQLite. The install script still runs; when
 * the names do not match (another version resolved), it downloads or compiles as usual.
 */
function localPrebuild(dir: string): Record<string, string> {
  const module = join(REPO, 'node_modules', 'better-sqlite3');
  const binary = join(module, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(binary)) return {};
  const { version } = JSON.parse(readFileSync(join(module, 'package.json'), 'utf8')) as { version: string };
  const folder = join(dir, 'prebuilds');
  mkdirSync(folder, { recursive: true });
  const asset = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['-czf', join(folder, asset), '-C', module, 'build/Release/better_sqlite3.node']);
  return { npm_config_better_sqlite3_local_prebuilds: folder };
}

describe('the npm package, installed into an empty project', () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-package-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const stage = join(dir, 'stage');
  const project = join(dir, 'project');
  let tarball = '';

  it('builds and packs: dist, examples, README and the bin; no tests, no test harness', BUILD_LIMIT, async () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { files: string[] };
    mkdirSync(stage);
    const copied = manifest.files.filter((file) => file !== 'dist' && !file.startsWith('!'));
    for (const name of ['package.json', 'README.md', ...copied]) {
      cpSync(join(REPO, name), join(stage, name), { recursive: true });
    }
    // --noCheck: the same files as `npm run build` writes, without type-checking the project
    // again (CI's typecheck and build do that), so that this test stays well within its time.
    const build = ['-p', join(REPO, 'tsconfig.build.json'), '--outDir', join(stage, 'dist'), '--noCheck'];
    await run(process.execPath, [TSC, ...build], {
      cwd: REPO,
    });
    chmodSync(join(stage, 'dist', 'cli', 'main.js'), 0o755); // as `npm run build` does
    // What a stale dist/ could hold (a build from before a file was excluded): "files" keeps it out.
    writeFileSync(join(stage, 'dist', 'cli', 'stale.test.js'), '');
    mkdirSync(join(stage, 'dist', 'tasks', 'stores', 'contract'), { recursive: true });
    writeFileSync(join(stage, 'dist', 'tasks', 'stores', 'contract', 'harness.js'), '');
    const packed = await run(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: stage });
    const [report] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    assert.ok(report !== undefined);
    tarball = join(dir, report.filename);
    const paths = report.files.map((file) => file.path);
    for (const needed of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js']) {
      assert.ok(paths.includes(needed), `${needed} is in the package`);
    }
    assert.ok(paths.includes('examples/demo.yaml'));
    const strays = paths.filter((path) => /\.test\.|\/contract\/|^test\/|^src\//.test(path));
    assert.deepEqual(strays, [], 'no test files, store contract harness or sources in the package');
  });

  it('installs into an empty project with npm install <tarball>', INSTALL_LIMIT, async () => {
    assert.ok(existsSync(tarball), 'the pack step made a tarball');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), `${JSON.stringify(CONSUMER_MANIFEST)}\n`);
    await run(NPM, ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: project,
      env: { ...process.env, npm_config_update_notifier: 'false', ...localPrebuild(dir) },
      maxBuffer: 16 * 1024 * 1024,
    });
    const installed = readdirSync(join(project, 'node_modules', 'a2a-airlock'));
    assert.ok(installed.includes('dist'));
  });

  // What follows only reads the installed project: it runs at once.
  describe('from the installed package', { concurrency: true }, () => {
    it('npx airlock --help lists the commands', RUN_LIMIT, async () => {
      // npm_config_yes=false: npx never fetches some other package named airlock from the registry.
      const help = await run(NPX, ['airlock', '--help'], {
        cwd: project,
        env: { ...process.env, npm_config_yes: 'false' },
      });
      assert.match(help.stdout, /^Usage: airlock \[options\] \[command\]$/m);
      for (const command of ['serve', 'send', 'agents', 'registry']) {
        assert.match(help.stdout, new RegExp(`^  ${command} `, 'm'), `${command} is listed`);
      }
    });

    it('the installed CLI opens a SQLite store (the native dependency was built)', RUN_LIMIT, async () => {
      const migrated = await run(NPX, ['airlock', 'db', 'migrate', '--data', 'data'], {
        cwd: project,
        env: { ...process.env, npm_config_yes: 'false' },
      });
      assert.ok(existsSync(join(project, 'data', 'airlock.db')), migrated.stdout + migrated.stderr);
    });

    it("the README's library example runs from the installed package", RUN_LIMIT, async () => {
      writeFileSync(join(project, 'example.mjs'), LIBRARY_EXAMPLE);
      const example = await run(process.execPath, ['example.mjs'], { cwd: project });
      assert.equal(example.stdout, 'THE SEA\n');
    });

    it("the README's example typechecks against the package's types", RUN_LIMIT, async () => {
      writeFileSync(join(project, 'example.ts'), TYPED_EXAMPLE);
      const args = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext'];
      await run(process.execPath, [TSC, ...args, '--target', 'es2022', '--skipLibCheck', 'example.ts'], {
        cwd: project,
      });
    });
  });
});
