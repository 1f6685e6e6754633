import Router from '@koa/router';
import type { Context } from 'koa';
import type { RouteContext } from '../api/app';
import { badRequest } from '../api/errors';
import { jsonBody, parseBody } from '../api/json-body';
import { requireStaff } from '../auth/require-staff';
import { confirmNewsletterSubscription } from './confirm-newsletter-subscription';
import type { CommandResult, PlatformContext } from './context';
import { checkoutInput, recordCheckout } from './record-checkout';
import { reconciliationInput, recordReconciliation } from './record-reconciliation';
import { recordRecurringPayment, recurringPaymentInput } from './record-recurring-payment';
import { recordShopOrder, shopOrderInput } from './record-shop-order';
import { runCommand } from './run-command';
import { signUpForNewsletter, signUpInput } from './sign-up-newsletter';

/** 201 with the new record, or 200 with the existing one when the natural key was already recorded. */
function respond<T>(ctx: Context, result: CommandResult<T>): void {
  ctx.status = result.created ? 201 : 200;
  ctx.body = result.record;
}

/**
 * The write side that donation forms, payment processing and the shop call: staff only, JSON bodies, each call
 * one transaction that writes its rows and the webhook events they cause.
 */
export function createPlatformRouter(context: RouteContext): Router {
  const { db } = context;
  const platform: PlatformContext = {
    now: () => new Date(context.tokens.clock() * 1000),
    platform: context.config.platform,
  };
  const router = new Router({ prefix: '/platform' });
  router.use(requireStaff(db, context.tokens, context.loginThrottle), jsonBody());

  // Which campaigns a form may name in `campaign_id` (the demo traffic picks from them).
  router.get('/campaigns', async function listCampaigns(ctx) {
    ctx.body = { results: await db('campaigns').select('id', 'title').orderBy('id') };
  });

  router.post('/checkouts', async function createCheckout(ctx) {
    const input = parseBody(checkoutInput, ctx.request.body);
    respond(ctx, await runCommand(db, (trx) => recordCheckout(trx, input, platform)));
  });

  router.post('/recurring-payments', async function createRecurringPayment(ctx) {
    const input = parseBody(recurringPaymentInput, ctx.request.body);
    respond(ctx, await runCommand(db, (trx) => recordRecurringPayment(trx, input, platform)));
  });

  router.post('/reconciliations', async function createReconciliation(ctx) {
    const input = parseBody(reconciliationInput, ctx.request.body);
    respond(ctx, await runCommand(db, (trx) => recordReconciliation(trx, input, platform)));
  });

  router.post('/newsletter-subscriptions', async function createNewsletterSignUp(ctx) {
    const input = parseBody(signUpInput, ctx.request.body);
    respond(ctx, await runCommand(db, (trx) => signUpForNewsletter(trx, input, platform)));
  });

  router.post('/newsletter-subscriptions/:id/confirm', async function confirmNewsletterSignUp(ctx) {
    const id = Number(ctx.params.id);
    if (!/^\d+$/.test(ctx.params.id) || !Number.isSafeInteger(id) || id > 2 ** 31 - 1) {
      throw badRequest('id: must be a subscription number');
    }
    respond(ctx, await runCommand(db, (trx) => confirmNewsletterSubscription(trx, id, platform)));
  });

  router.post('/shop-orders', async function createShopOrder(ctx) {
    const input = parseBody(shopOrderInput, ctx.request.body);
    respond(ctx, await runCommand(db, (trx) => recordShopOrder(trx, input, platform)));
  });

  return router;
}
