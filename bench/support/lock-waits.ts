import type { Db } from '../../src/db/knex';

/**
 * Samples Postgres's sessions while a phase runs: how many wait for a lock, and which statements they are, to show
 * whether deliveries queue behind the relay's locked rows.
 */
export class LockWaitSampler {
  private samples = 0;
  private waitingTotal = 0;
  private waitingMax = 0;
  private readonly statements = new Map<string, number>();
  private running = true;
  private readonly loop: Promise<void>;

  constructor(private readonly db: Db, intervalMs = 100) {
    this.loop = (async () => {
      while (this.running) {
        await this.sample().catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
      }
    })();
  }

  private async sample(): Promise<void> {
    const { rows } = await this.db.raw<{ rows: Array<{ query: string }> }>(
      `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 80) AS query FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    this.samples += 1;
    this.waitingTotal += rows.length;
    this.waitingMax = Math.max(this.waitingMax, rows.length);
    for (const { query } of rows) this.statements.set(query, (this.statements.get(query) ?? 0) + 1);
  }

  async stop() {
    this.running = false;
    await this.loop;
    return {
      samples: this.samples,
      meanWaiting: this.samples ? this.waitingTotal / this.samples : 0,
      maxWaiting: this.waitingMax,
      /** Statements seen waiting, with how many samples saw each (one session per sample). */
      waitingStatements: Object.fromEntries([...this.statements].sort((a, b) => b[1] - a[1]).slice(0, 5)),
    };
  }
}
