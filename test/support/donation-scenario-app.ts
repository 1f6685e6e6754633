import { type DonationScenario, seedDonationScenario } from './api-fixtures';
import { type DocumentedResponses, documentedResponses } from './documented-responses';
import { startTestApp, type TestApp } from './test-app';

export interface DonationScenarioApp {
  app: TestApp;
  scenario: DonationScenario;
  /** Checks answers against the app's OpenAPI document. */
  documented: DocumentedResponses;
}

/**
 * The set-up of the read API's donation and contact tests: a test app with the donation scenario, started before
 * the file's tests and closed after them. The fields are filled in once the file's beforeAll hooks have run.
 */
export function useDonationScenarioApp(): DonationScenarioApp {
  const given = {} as DonationScenarioApp;
  beforeAll(async () => {
    given.app = await startTestApp();
    given.scenario = await seedDonationScenario(given.app.db);
    given.documented = await documentedResponses(given.app.baseUrl);
  });
  afterAll(async () => {
    await given.app?.close();
  });
  return given;
}
