import path from 'node:path';
import { finished, type Finished, spawnTypeScript } from './typescript-process';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'embedded-postgres-process.ts');

export interface EmbeddedCluster {
  stop(): Promise<Finished>;
  /** As `kill -9` ends a start command: no chance to stop its Postgres. */
  kill(): Promise<Finished>;
}

/**
 * An embedded cluster as `npm start` runs it (persistent, durable), in a process of its own: the package is an ES
 * module Jest cannot load. `settings`: server settings beside those (`-c name=value`). Resolves once it accepts
 * connections; rejects with what the start wrote to stderr.
 */
export async function startEmbeddedCluster(clusterDir: string, port: number, settings: Record<string, string> = {}): Promise<EmbeddedCluster> {
  const child = spawnTypeScript(FIXTURE, [clusterDir, String(port), JSON.stringify(settings)]);
  const done = finished(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    void done.then(({ stderr }) => reject(new Error(stderr.trim())));
  });
  return {
    stop() {
      child.stdin?.end();
      return done;
    },
    kill() {
      child.kill('SIGKILL');
      return done;
    },
  };
}
