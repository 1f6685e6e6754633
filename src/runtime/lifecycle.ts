import type { Logger } from '../logger';

type Stop = () => Promise<void>;

/**
 * What a process started, stopped in reverse order on SIGINT/SIGTERM or after a failed start-up, so that Ctrl-C
 * leaves no Postgres or Temporal process behind.
 */
export class Lifecycle {
  private readonly stops: Stop[] = [];
  private stopping?: Promise<void>;

  constructor(private readonly log: Logger) {}

  onStop(stop: Stop): void {
    this.stops.push(stop);
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const stop of this.stops.reverse()) {
        await stop().catch((err: unknown) => this.log.error({ err }, 'error while stopping'));
      }
    })();
    return this.stopping;
  }

  exitOnSignals(): void {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        this.log.info({ signal }, 'stopping');
        void this.stop().then(() => process.exit(0));
      });
    }
  }
}
