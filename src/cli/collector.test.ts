import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  availableCores,
  cgroupCpuQuota,
  collectorFields,
  parseCfsQuota,
  parseCollectorMode,
  parseCpuMax,
  planCollector,
  SINGLE_THREADED_GC,
  type CollectorMode,
} from './collector.js';

const FLAG = [SINGLE_THREADED_GC];

describe('the collector plan of airlock serve', () => {
  it('auto: one process on one core or less is started again with the flag', () => {
    for (const [cores, reason] of [
      [1, '1 core'],
      [0.5, '0.50 cores'],
    ] as const) {
      const plan = planCollector({ mode: 'auto', cores, workers: 1, execArgv: [] });
      assert.deepEqual(plan, { singleThreaded: true, relaunch: true, workerFlags: [], reason });
    }
  });

  it('auto: one process with more than one core keeps the default, so no second process', () => {
    for (const cores of [1.5, 2, 64]) {
      assert.deepEqual(planCollector({ mode: 'auto', cores, workers: 1, execArgv: [] }), {
        singleThreaded: false,
        relaunch: false,
        workerFlags: [],
        reason: `${cores === 1.5 ? '1.50' : cores} cores`,
      });
    }
  });

  it('auto: workers get the flag when there are no more cores than workers, and nobody is relaunched', () => {
    const crowded = planCollector({ mode: 'auto', cores: 2, workers: 2, execArgv: [] });
    assert.deepEqual(crowded, {
      singleThreaded: true,
      relaunch: false,
      workerFlags: FLAG,
      reason: '2 cores for 2 workers',
    });
    const roomy = planCollector({ mode: 'auto', cores: 8, workers: 2, execArgv: [] });
    assert.deepEqual(roomy, {
      singleThreaded: false,
      relaunch: false,
      workerFlags: [],
      reason: '8 cores for 2 workers',
    });
  });

  it('single-threaded always, concurrent never, whatever the cores', () => {
    assert.deepEqual(planCollector({ mode: 'single-threaded', cores: 64, workers: 1, execArgv: [] }), {
      singleThreaded: true,
      relaunch: true,
      workerFlags: [],
      reason: '--gc single-threaded',
    });
    assert.deepEqual(planCollector({ mode: 'single-threaded', cores: 64, workers: 4, execArgv: [] }).workerFlags, FLAG);
    assert.deepEqual(planCollector({ mode: 'concurrent', cores: 1, workers: 1, execArgv: [] }), {
      singleThreaded: false,
      relaunch: false,
      workerFlags: [],
      reason: '--gc concurrent',
    });
    assert.deepEqual(planCollector({ mode: 'concurrent', cores: 1, workers: 4, execArgv: [] }).workerFlags, []);
  });

  it('a process that already has the flag is never started again (no loop) and its workers inherit it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<CollectorMode>('auto', 'single-threaded', 'concurrent'),
        fc.double({ min: 0.1, max: 256, noNaN: true }),
        fc.integer({ min: 1, max: 256 }),
        (mode, cores, workers) => {
          const plan = planCollector({ mode, cores, workers, execArgv: ['--max-old-space-size=512', ...FLAG] });
          assert.equal(plan.singleThreaded, true);
          assert.equal(plan.relaunch, false);
          assert.deepEqual(plan.workerFlags, []);
        },
      ),
    );
  });

  it('relaunches only one process, and adds the flag only for workers', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<CollectorMode>('auto', 'single-threaded', 'concurrent'),
        fc.double({ min: 0.1, max: 256, noNaN: true }),
        fc.integer({ min: 1, max: 256 }),
        (mode, cores, workers) => {
          const plan = planCollector({ mode, cores, workers, execArgv: [] });
          assert.equal(plan.relaunch, plan.singleThreaded && workers === 1);
          assert.deepEqual(plan.workerFlags, plan.singleThreaded && workers > 1 ? FLAG : []);
        },
      ),
    );
  });

  it('reads --gc', () => {
    assert.equal(parseCollectorMode('auto'), 'auto');
    assert.equal(parseCollectorMode('single-threaded'), 'single-threaded');
    assert.equal(parseCollectorMode('concurrent'), 'concurrent');
    for (const bad of ['', 'AUTO', 'single', 'parallel', ' auto']) assert.equal(parseCollectorMode(bad), undefined);
  });

  it('names the collector and why in the start-up lines', () => {
    assert.deepEqual(collectorFields({ singleThreaded: true, reason: '1 core' }), {
      gc: 'single-threaded',
      gcReason: '1 core',
    });
    assert.deepEqual(collectorFields({ singleThreaded: false, reason: '--gc concurrent' }), {
      gc: 'concurrent',
      gcReason: '--gc concurrent',
    });
  });
});

/** The quota read from these files (absent ones unreadable). */
function quotaOf(files: Record<string, string>): number | undefined {
  return cgroupCpuQuota((path) => files[path]);
}

describe('the CPU quota of a cgroup', () => {
  it("reads cgroup v2's cpu.max", () => {
    assert.equal(parseCpuMax('100000 100000\n'), 1);
    assert.equal(parseCpuMax('150000 100000'), 1.5);
    assert.equal(parseCpuMax('max 100000\n'), undefined);
    for (const bad of [undefined, '', '100000', 'x y', '-1 100000', '0 100000', '100000 0']) {
      assert.equal(parseCpuMax(bad), undefined, String(bad));
    }
  });

  it("reads cgroup v1's quota and period", () => {
    assert.equal(parseCfsQuota('50000\n', '100000\n'), 0.5);
    assert.equal(parseCfsQuota('-1\n', '100000\n'), undefined);
    assert.equal(parseCfsQuota(undefined, '100000'), undefined);
    assert.equal(parseCfsQuota('50000', undefined), undefined);
  });

  it('v2: the smallest quota of the process group and every group above it', () => {
    const files: Record<string, string> = {
      '/proc/self/cgroup': '0::/system.slice/airlock.service\n',
      '/sys/fs/cgroup/system.slice/airlock.service/cpu.max': 'max 100000\n',
      '/sys/fs/cgroup/system.slice/cpu.max': '100000 100000\n',
      '/sys/fs/cgroup/cpu.max': '400000 100000\n',
    };
    assert.equal(quotaOf(files), 1);
    // A container's own namespace: the group is the root.
    const container: Record<string, string> = {
      '/proc/self/cgroup': '0::/\n',
      '/sys/fs/cgroup/cpu.max': '150000 100000',
    };
    assert.equal(quotaOf(container), 1.5);
  });

  it('v1: the cpu controller line, under either mount name', () => {
    const files: Record<string, string> = {
      '/proc/self/cgroup': '12:memory:/x\n3:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n',
      '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us': '100000\n',
      '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000\n',
    };
    assert.equal(quotaOf(files), 1);
    const unlimited: Record<string, string> = {
      '/proc/self/cgroup': '1:cpu:/\n2:cpuacct:/\n',
      '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1\n',
      '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n',
    };
    assert.equal(quotaOf(unlimited), undefined);
  });

  it('no quota where nothing can be read (another system, a locked /proc)', () => {
    assert.equal(
      cgroupCpuQuota(() => undefined),
      undefined,
    );
    assert.equal(
      cgroupCpuQuota((path) => (path === '/proc/self/cgroup' ? 'garbage\n\n' : undefined)),
      undefined,
    );
  });

  it('counts the quota against the affinity', () => {
    const quota = (text: string) => (path: string) =>
      path === '/proc/self/cgroup' ? '0::/\n' : path === '/sys/fs/cgroup/cpu.max' ? text : undefined;
    assert.equal(availableCores(quota('50000 100000')), 0.5);
    assert.ok(availableCores(quota('max 100000')) >= 1);
    assert.ok(availableCores(quota('100000000 100000')) <= 1000);
  });
});
