import { createKeyring } from '../../src/secrets/keyring';
import type { EndpointSettings } from '../../src/webhook-endpoint/endpoint-store';
import { PLATFORM_DONOR } from './platform-donor';
import type { TestApp } from './test-app';
import { saveEndpointForEveryEvent } from './webhook-rows';

/** What the platform tests call and look at: the endpoint that makes events, the events a call made, request bodies. */

/** An active endpoint for every event type (so that calls create events), with the given settings. */
export async function useEndpoint(app: TestApp, settings: Partial<EndpointSettings> = {}): Promise<void> {
  await saveEndpointForEveryEvent(app.db, settings, new Date(), createKeyring(app.config.secrets.keys));
}

export interface EventRow {
  id: number;
  event_type: string;
  payload_version: string;
  source_key: string;
  payload: string;
  status: string;
}

/** The events the action created, oldest first. */
export async function eventsCreatedBy(app: TestApp, action: () => Promise<unknown>): Promise<EventRow[]> {
  const [{ max }] = await app.db('webhook_events').max('id as max');
  await action();
  return app.db('webhook_events').where('id', '>', max ?? 0).orderBy('id');
}

let transactionCounter = 0;
/** A transaction id no other call of the test file has used (each test file has its own database). */
export const nextTransactionId = () => `tx-${++transactionCounter}`;

/** A single TWINT donation of 50 CHF by the test donor, with a new transaction id, and the given fields replaced. */
export function checkoutBody(overrides: Record<string, unknown> = {}) {
  return {
    environment: 'PRODUCTION',
    currency: 'CHF',
    donor: PLATFORM_DONOR,
    positions: [{ amount: 50, campaign_id: null, purpose: 'Brunnenbau' }],
    payment: { transaction_id: nextTransactionId(), method: 'TWI', status: 'completed' },
    ...overrides,
  };
}

export const SHOP_CUSTOMER = {
  gender: 'male',
  first_name: 'Reto',
  last_name: 'Brunner',
  email: 'reto.brunner@example.ch',
  phone: '+41 31 123 45 67',
  street: 'Marktgasse',
  street_number: '3',
  postal_code: '3011',
  city: 'Bern',
  country: 'CH',
  language: 'de',
};

const SHOP_ADDRESS = { first_name: 'Reto', last_name: 'Brunner', street: 'Marktgasse', street_number: '3', postal_code: '3011', city: 'Bern', country: 'CH' };

/** A shop order of two calendars with a new transaction id. */
export function shopOrderBody(customerType: 'registered' | 'guest' = 'registered') {
  return {
    environment: 'PRODUCTION',
    customer_type: customerType,
    customer: SHOP_CUSTOMER,
    invoice_address: SHOP_ADDRESS,
    items: [
      { article_number: 'KAL-2026', quantity: 2, unit_price_net: 18.5, unit_price_gross: 19.95, discount_percentage: 10, total_price_gross: 35.91 },
    ],
    currency: 'CHF',
    total_price_gross: 42.91,
    total_vat: 2.89,
    total_discount: 3.99,
    payment: { transaction_id: nextTransactionId(), method: 'PAYPAL', status: 'completed' },
    shipping: { method: 'A-Post', cost: 7 },
  };
}
