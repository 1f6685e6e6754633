import type { Knex } from 'knex';
import { z } from 'zod';
import type { ShopOrderItemModel, ShopOrderModel } from '../db/models';
import { toAmount, toMinor } from '../shared/money';
import { formatTimestamp } from '../shared/time';
import { envelopeEnvironment } from '../webhooks/envelope';
import { recordWebhookEvents } from '../webhooks/record-events';
import { renderShopOrderCompleted } from '../webhooks/payloads/shop-order';
import { SHOP_ADDRESS_FIELDS, type ShopAddress, type ShopCustomer, type ShopOrderView } from '../webhooks/payloads/views';
import { upsertContact } from './contact-store';
import type { CommandResult, PlatformContext } from './context';
import {
  countryInput,
  currencyInput,
  emailInput,
  environmentInput,
  genderInput,
  languageInput,
  minorOf,
  nonNegativeAmountInput,
  optionalText,
  paymentMethodInput,
  paymentStatusInput,
  requiredText,
  transactionIdInput,
} from './input-schemas';
import { QR_INVOICE_METHOD } from './invoice-reference';

const addressInput = z.object({
  first_name: requiredText(100),
  last_name: requiredText(100),
  company: optionalText(200),
  department: optionalText(200),
  care_of: optionalText(200),
  po_box: optionalText(100),
  street: requiredText(200),
  street_number: optionalText(20),
  postal_code: requiredText(20),
  city: requiredText(100),
  country: countryInput,
});

const customerInput = z.object({
  gender: genderInput,
  first_name: requiredText(100),
  last_name: requiredText(100),
  email: emailInput,
  phone: optionalText(50),
  company: optionalText(200),
  department: optionalText(200),
  care_of: optionalText(200),
  po_box: optionalText(100),
  street: requiredText(200),
  street_number: optionalText(20),
  postal_code: requiredText(20),
  city: requiredText(100),
  country: countryInput,
  language: languageInput,
});

const itemInput = z.object({
  article_number: requiredText(100),
  quantity: z.number().int().positive().max(1_000_000),
  unit_price_net: nonNegativeAmountInput,
  unit_price_gross: nonNegativeAmountInput,
  discount_percentage: z
    .number()
    .min(0)
    .max(100)
    .refine((value) => toMinor(value) !== undefined, 'must have at most 2 decimals')
    .default(0),
  total_price_gross: nonNegativeAmountInput,
});

export const shopOrderInput = z
  .object({
    environment: environmentInput,
    /** A registered customer's order is linked to their contact; a guest order stands alone. */
    customer_type: z.enum(['registered', 'guest']),
    customer: customerInput,
    invoice_address: addressInput,
    /** Defaults to the invoice address. */
    delivery_address: addressInput.optional(),
    items: z.array(itemInput).min(1).max(500),
    currency: currencyInput,
    total_price_gross: nonNegativeAmountInput,
    total_vat: nonNegativeAmountInput,
    total_discount: nonNegativeAmountInput,
    payment: z.object({
      transaction_id: transactionIdInput,
      method: paymentMethodInput,
      status: paymentStatusInput.default('completed'),
    }),
    shipping: z.object({ method: requiredText(100), cost: nonNegativeAmountInput }),
  })
  .superRefine((input, issues) => {
    if (input.payment.status === 'pending' && input.payment.method !== QR_INVOICE_METHOD) {
      issues.addIssue({ code: 'custom', path: ['payment', 'status'], message: 'only a QR invoice (INV) can be pending' });
    }
  });

export type ShopOrderInput = z.output<typeof shopOrderInput>;

type AddressRow = ShopAddress & { kind: 'invoice' | 'delivery' };

async function loadShopOrderView(trx: Knex.Transaction, order: ShopOrderModel): Promise<ShopOrderView> {
  const addresses: AddressRow[] = await trx('shop_order_addresses').where({ shop_order_id: order.id });
  const items: ShopOrderItemModel[] = await trx('shop_order_items').where({ shop_order_id: order.id }).orderBy('position');
  const address = (kind: AddressRow['kind']) => addresses.find((row) => row.kind === kind) as ShopAddress;
  return {
    number: order.number,
    createdAt: order.created_at,
    customer: order.customer as ShopCustomer,
    invoiceAddress: address('invoice'),
    deliveryAddress: address('delivery'),
    items: items.map((item) => ({
      articleNumber: item.article_number,
      quantity: item.quantity,
      unitPriceNetMinor: item.unit_price_net_minor,
      unitPriceGrossMinor: item.unit_price_gross_minor,
      discountPercentage: item.discount_percentage,
      totalPriceGrossMinor: item.total_price_gross_minor,
    })),
    currency: order.currency,
    totalPriceGrossMinor: order.total_price_gross_minor,
    totalVatMinor: order.total_vat_minor,
    totalDiscountMinor: order.total_discount_minor,
    payment: { transactionId: order.transaction_id, method: order.payment_method, status: order.payment_status },
    shipping: { method: order.shipping_method, costMinor: order.shipping_cost_minor },
  };
}

function presentShopOrder(order: ShopOrderModel) {
  return {
    number: order.number,
    transaction_id: order.transaction_id,
    environment: order.environment,
    customer_type: order.contact_id === null ? 'guest' : 'registered',
    contact_id: order.contact_id,
    currency: order.currency,
    total_price_gross: toAmount(order.total_price_gross_minor),
    payment: { transaction_id: order.transaction_id, method: order.payment_method, status: order.payment_status },
    created_at: formatTimestamp(order.created_at, 'utc'),
  };
}

export type ShopOrderRecord = ReturnType<typeof presentShopOrder>;

const addressRow = (address: z.output<typeof addressInput>) =>
  Object.fromEntries(SHOP_ADDRESS_FIELDS.map((field) => [field, address[field]]));

/**
 * A completed shop order (registered customer or guest): the order with its addresses and items, and its
 * shop_order.completed event. The shop computes prices, VAT and discounts; they are stored as given.
 * Idempotent on the transaction id.
 */
export async function recordShopOrder(
  trx: Knex.Transaction,
  input: ShopOrderInput,
  ctx: PlatformContext,
): Promise<CommandResult<ShopOrderRecord>> {
  const existing: ShopOrderModel | undefined = await trx('shop_orders')
    .where({ transaction_id: input.payment.transaction_id })
    .first();
  if (existing) return { created: false, record: presentShopOrder(existing) };

  const now = ctx.now();
  const { customer } = input;
  const contact =
    input.customer_type === 'registered'
      ? await upsertContact(trx, input.environment, { ...customer, street_number: customer.street_number ?? '' }, now)
      : null;
  const {
    rows: [{ number }],
  } = await trx.raw<{ rows: { number: number }[] }>(`SELECT nextval('shop_order_number_seq') AS number`);
  const [order]: ShopOrderModel[] = await trx('shop_orders')
    .insert({
      number: String(number),
      environment: input.environment,
      contact_id: contact?.id ?? null,
      customer: JSON.stringify(customer),
      currency: input.currency,
      total_price_gross_minor: minorOf(input.total_price_gross),
      total_vat_minor: minorOf(input.total_vat),
      total_discount_minor: minorOf(input.total_discount),
      transaction_id: input.payment.transaction_id,
      payment_method: input.payment.method,
      payment_status: input.payment.status,
      shipping_method: input.shipping.method,
      shipping_cost_minor: minorOf(input.shipping.cost),
      created_at: now,
    })
    .returning('*');
  await trx('shop_order_addresses').insert([
    { shop_order_id: order.id, kind: 'invoice', ...addressRow(input.invoice_address) },
    { shop_order_id: order.id, kind: 'delivery', ...addressRow(input.delivery_address ?? input.invoice_address) },
  ]);
  await trx('shop_order_items').insert(
    input.items.map((item, index) => ({
      shop_order_id: order.id,
      position: index + 1,
      article_number: item.article_number,
      quantity: item.quantity,
      unit_price_net_minor: minorOf(item.unit_price_net),
      unit_price_gross_minor: minorOf(item.unit_price_gross),
      discount_percentage: item.discount_percentage,
      total_price_gross_minor: minorOf(item.total_price_gross),
    })),
  );
  const view = await loadShopOrderView(trx, order);
  await recordWebhookEvents(trx, {
    type: 'shop_order.completed',
    environment: envelopeEnvironment(input.environment, ctx.platform.isStaging),
    occurredAt: now,
    render: (features) => renderShopOrderCompleted(view, features),
  });
  return { created: true, record: presentShopOrder(order) };
}
