/** What a topology says of one process: what to run, with which settings, how to stop it and when it is ready. */
export interface ProcessSpec {
  /** Log file and display name: `api-1`, `temporal-history`. */
  name: string;
  /** The Compose service it stands for. */
  service: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  /** SIGTERM, then SIGKILL after this long (Compose: stop_grace_period, default 10 s). */
  stopGraceMs: number;
  /** When a long-running process counts as started: its port accepts connections, or its URL answers 2xx. */
  ready?: { port: number } | { url: string };
}
