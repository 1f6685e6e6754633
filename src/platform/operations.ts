import type { Context } from 'koa';
import { z } from 'zod';
import { defineOperation, type Operation, type OperationGroup, type RouteContext } from '../route-context';
import { idParam } from '../http/integer-params';
import type { ErrorCode } from '../shared/errors';
import { listCampaigns } from '../campaign-links/campaign-store';
import { confirmNewsletterSubscription } from './confirm-newsletter-subscription';
import type { CommandResult, PlatformCommand, PlatformContext } from './context';
import { checkoutInput, recordCheckout } from './record-checkout';
import { reconciliationInput, recordReconciliation } from './record-reconciliation';
import { recordRecurringPayment, recurringPaymentInput } from './record-recurring-payment';
import {
  campaignListSchema,
  paymentRecordSchema,
  reconciliationRecordSchema,
  shopOrderRecordSchema,
  signUpRecordSchema,
} from './record-schemas';
import { recordShopOrder, shopOrderInput } from './record-shop-order';
import { runCommand } from './run-command';
import { signUpForNewsletter, signUpInput } from './sign-up-newsletter';

const platformContext = ({ now, config }: RouteContext): PlatformContext => ({
  now,
  platform: config.platform,
});

/** 201 with the new record, or 200 with the existing one when the natural key was already recorded. */
function respond<T>(ctx: Context, result: CommandResult<T>): void {
  ctx.status = result.created ? 201 : 200;
  ctx.body = result.record;
}

const createdOrFound = (what: string, schema: z.ZodType) => ({
  201: { description: `${what} recorded`, schema },
  200: { description: `${what} recorded before under the same key, the same in every material field; nothing new was created`, schema },
});

/**
 * A command of the write side: one transaction that writes its rows and the webhook events they cause, idempotent
 * on its natural key.
 */
function command<B>(declaration: {
  path: string;
  summary: string;
  description: string;
  body: z.ZodType<B>;
  record: string;
  schema: z.ZodType;
  errors?: ErrorCode[];
  run: PlatformCommand<B, unknown>;
}): Operation {
  return defineOperation({
    method: 'post',
    path: declaration.path,
    access: 'staff',
    summary: declaration.summary,
    description: declaration.description,
    body: declaration.body,
    responses: createdOrFound(declaration.record, declaration.schema),
    errors: declaration.errors,
    async handle(ctx, { body }, deps) {
      const platform = platformContext(deps);
      respond(ctx, await runCommand(deps.db, (trx) => declaration.run(trx, body, platform)));
    },
  });
}

/** The campaigns a form may name. */
const campaignOperations = (): Operation[] => [
  defineOperation({
    method: 'get',
    path: '/campaigns',
    access: 'staff',
    summary: 'Campaigns and their link ids',
    description: 'Which campaigns a form may name in `campaign_id`, with the ids of their campaign links.',
    responses: { 200: { description: 'Every campaign, by id', schema: campaignListSchema } },
    async handle(ctx, _input, { db }) {
      ctx.body = { results: await listCampaigns(db) };
    },
  }),
];

/** Payments: checkouts, follow-ups of recurring donations, reconciliations. */
const paymentOperations = (): Operation[] => [
  command({
    path: '/checkouts',
    summary: 'Record a checkout (one or more donations paid at once)',
    description: 'Key: `payment.transaction_id`. Fires `donation.completed`.',
    body: checkoutInput,
    record: 'The payment',
    schema: paymentRecordSchema,
    errors: ['unknown_campaign', 'transaction_id_in_use', 'transaction_id_reused'],
    run: recordCheckout,
  }),
  command({
    path: '/recurring-payments',
    summary: 'Record a follow-up payment of a recurring donation',
    description: 'Key: `payment.transaction_id`. Fires `donation.recurring_completed`.',
    body: recurringPaymentInput,
    record: 'The payment',
    schema: paymentRecordSchema,
    errors: ['recurring_donation_not_found', 'recurring_donation_inactive', 'transaction_id_in_use', 'transaction_id_reused'],
    run: recordRecurringPayment,
  }),
  command({
    path: '/reconciliations',
    summary: 'Record the payout and fee of a payment',
    description: 'Once per completed online payment (a second report is a 409). Fires `donation.reconciled`.',
    body: reconciliationInput,
    record: 'The reconciliation',
    schema: reconciliationRecordSchema,
    errors: ['payment_not_found', 'not_reconcilable', 'already_reconciled'],
    run: recordReconciliation,
  }),
];

/** Newsletter sign-ups and their confirmation (double opt-in). */
const newsletterOperations = (): Operation[] => [
  command({
    path: '/newsletter-subscriptions',
    summary: 'Record a newsletter sign-up (unconfirmed)',
    description: 'Key: e-mail and channel while unconfirmed. Fires nothing until confirmed.',
    body: signUpInput,
    record: 'The sign-up',
    schema: signUpRecordSchema,
    errors: ['unknown_contact', 'contact_email_mismatch'],
    run: signUpForNewsletter,
  }),
  defineOperation({
    method: 'post',
    path: '/newsletter-subscriptions/:id/confirm',
    access: 'staff',
    summary: 'Confirm a newsletter sign-up (double opt-in)',
    description: 'The first confirmation fires `newsletter.subscribed`; a later one changes nothing (200).',
    params: z.object({ id: idParam('id') }),
    responses: {
      201: { description: 'Confirmed now', schema: signUpRecordSchema },
      200: { description: 'Confirmed before; nothing changed', schema: signUpRecordSchema },
    },
    errors: ['subscription_not_found'],
    async handle(ctx, { params }, deps) {
      const platform = platformContext(deps);
      respond(ctx, await runCommand(deps.db, (trx) => confirmNewsletterSubscription(trx, params.id, platform)));
    },
  }),
];

/** Orders of the donation shop. */
const shopOperations = (): Operation[] => [
  command({
    path: '/shop-orders',
    summary: 'Record a completed shop order',
    description: 'Key: `payment.transaction_id`. Fires `shop_order.completed`.',
    body: shopOrderInput,
    record: 'The order',
    schema: shopOrderRecordSchema,
    errors: ['transaction_id_in_use', 'transaction_id_reused'],
    run: recordShopOrder,
  }),
];

/**
 * The write side that donation forms, payment processing and the shop call: staff only, JSON bodies, each call one
 * transaction that writes its rows and the webhook events they cause.
 */
export const platformGroup = (): OperationGroup => ({
  prefix: '/platform',
  tag: 'platform',
  description: 'The write side (donation forms, payments, shop): staff only, idempotent on each natural key',
  operations: [...campaignOperations(), ...paymentOperations(), ...newsletterOperations(), ...shopOperations()],
});
