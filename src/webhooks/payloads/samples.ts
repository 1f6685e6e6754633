import type { WebhookEventType } from '../event-types';
import type { PayloadFeatures } from '../payload-versions';
import { renderDonationCompleted, renderDonationReconciled, renderRecurringCompleted } from './donation';
import { renderNewsletterSubscribed } from './newsletter';
import type { RenderedEvent } from './rendered';
import { renderShopOrderCompleted } from './shop-order';
import type { PaymentSnapshot, ShopAddress } from './views';

/*
 * The sample data of a test event: made up, plainly so (a Test Testperson at example.org, numbers and transaction ids
 * starting with TEST-/test-, campaign 0), and rendered by the same renderers as real events, so that it has exactly
 * the fields of its version and event type.
 */

const address: ShopAddress = {
  first_name: 'Test',
  last_name: 'Testperson',
  company: null,
  department: null,
  care_of: null,
  po_box: null,
  street: 'Teststrasse',
  street_number: '1',
  postal_code: '8000',
  city: 'Zürich',
  country: 'CH',
};

function samplePayment(eventId: number, createdAt: Date): PaymentSnapshot {
  const number = `TEST-${eventId}`;
  return {
    number,
    createdAt,
    currency: 'CHF',
    donor: {
      gender: 'prefer-not-to-say',
      first_name: 'Test',
      last_name: 'Testperson',
      email: 'test.testperson@example.org',
      company: null,
      po_box: null,
      street: address.street,
      street_number: '1',
      postal_code: address.postal_code,
      city: address.city,
      country: 'CH',
      language: 'de',
      newsletter: false,
    },
    customFields: { Testfeld: 'Testereignis' },
    payment: { transactionId: `test-${eventId}`, method: 'TWI', status: 'completed' },
    invoice: null,
    positions: [{ number, amountMinor: 5000, campaign: { id: 0, title: 'Testkampagne' }, purpose: 'Testzweck' }],
  };
}

/** The `data` of a test event of this type, for the payload version; one event on every version (one position). */
export function sampleEventData(event: WebhookEventType, features: PayloadFeatures, eventId: number, createdAt: Date): RenderedEvent {
  const payment = samplePayment(eventId, createdAt);
  const rendered = (() => {
    switch (event) {
      case 'donation.completed':
        return renderDonationCompleted(payment, features);
      case 'donation.recurring_completed':
        return renderRecurringCompleted(payment, features);
      case 'donation.reconciled':
        return renderDonationReconciled(payment, { paidOutMinor: 4855, feeMinor: 145, currency: 'CHF' }, features);
      case 'newsletter.subscribed':
        return renderNewsletterSubscribed(
          {
            id: 0,
            contactId: null,
            gender: 'prefer-not-to-say',
            firstName: 'Test',
            lastName: 'Testperson',
            email: 'test.testperson@example.org',
            language: 'de',
            confirmedAt: createdAt,
          },
          features,
        );
      case 'shop_order.completed':
        return renderShopOrderCompleted(
          {
            number: payment.number,
            createdAt,
            customer: { gender: 'prefer-not-to-say', ...address, email: 'test.testperson@example.org', phone: null, language: 'de' },
            invoiceAddress: address,
            deliveryAddress: address,
            items: [
              {
                articleNumber: 'TEST-ARTIKEL',
                quantity: 1,
                unitPriceNetMinor: 1850,
                unitPriceGrossMinor: 2000,
                discountPercentage: 0,
                totalPriceGrossMinor: 2000,
              },
            ],
            currency: 'CHF',
            totalPriceGrossMinor: 2700,
            totalVatMinor: 150,
            totalDiscountMinor: 0,
            payment: payment.payment,
            shipping: { method: 'Post', costMinor: 700 },
          },
          features,
        );
    }
  })();
  return rendered[0];
}
