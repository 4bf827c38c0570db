/**
 * A CommandIO for running CLI command functions in a test: what they print is kept in `out`
 * (stdout) and `err` (stderr), never written to the terminal.
 */
import type { CommandIO } from '../../src/cli/registry.js';

export interface CapturedIO extends CommandIO {
  out: string;
  err: string;
}

export function captureIO(env: NodeJS.ProcessEnv = {}): CapturedIO {
  const io: CapturedIO = {
    out: '',
    err: '',
    stdout: (text) => void (io.out += text),
    stderr: (text) => void (io.err += text),
    isTTY: false,
    env,
  };
  return io;
}
