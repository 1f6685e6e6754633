import type { Config } from '../config';

/** Where the Temporal CLI dev server serves its Web UI. */
export const devServerUiUrl = (uiPort: number) => `http://127.0.0.1:${uiPort}`;

/**
 * The Temporal Web UI as operators reach it: TEMPORAL_UI_URL when set; otherwise, when this process starts the dev
 * server itself (no TEMPORAL_ADDRESS), the dev server's UI; otherwise unknown (null).
 */
export function temporalUiUrl(config: Config): string | null {
  if (config.temporal.uiUrl) return config.temporal.uiUrl.replace(/\/+$/, '');
  return config.temporal.address ? null : devServerUiUrl(config.temporal.uiPort);
}
