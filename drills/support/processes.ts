import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { projectRoot } from '../../src/config';


export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 100 ms until it holds, or throws once `timeoutMs` has passed. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await Promise.resolve(check()).catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

export const portAnswers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** A child process of the drill, its output in a log file; killed by its own pid only. */
export interface Child {
  name: string;
  pid: number;
  exited: Promise<number | null>;
  isRunning(): boolean;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export function startChild(name: string, command: string, args: string[], env: NodeJS.ProcessEnv, logDir: string): Child {
  // The child writes its log file itself: two pipes into one stream would end it with the first of them (and a
  // late write to the other then crashes this process), and the log goes on if this process dies first.
  const log = openSync(path.join(logDir, `${name}.log`), 'a');
  const child: ChildProcess = spawn(command, args, { cwd: projectRoot, env, stdio: ['ignore', log, log] });
  closeSync(log);
  let running = true;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    running = false;
    resolve(code);
  }));
  return {
    name,
    pid: child.pid ?? -1,
    exited,
    isRunning: () => running,
    async kill(signal = 'SIGTERM') {
      if (running) child.kill(signal);
      await exited;
    },
  };
}

/**
 * `node dist/src/main.js <role>`: the production roles, exactly as the compose stack runs them; of the project, or of
 * another build of it (`root`, a release the deploy drill built).
 */
export function startRole(
  role: 'api' | 'worker' | 'relay' | 'delivery' | 'migrate',
  name: string,
  env: NodeJS.ProcessEnv,
  logDir: string,
  root = projectRoot,
): Child {
  return startChild(name, process.execPath, [path.join(root, 'dist', 'src', 'main.js'), role], env, logDir);
}
