import { z } from 'zod';
import { toAmount, toMinor } from '../shared/money';
import { formatTimestamp } from '../shared/time';
import { renderShopOrderCompleted } from '../webhooks/payloads/shop-order';
import { recordCommandEvents } from './command-events';
import { upsertContact } from '../contacts/contact-store';
import type { PlatformCommand } from './context';
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
  refineAmountsIn,
  requiredText,
  transactionIdInput,
} from './input-schemas';
import { QR_INVOICE_METHOD } from './invoice-reference';
import { findShopOrderByTransactionId, insertShopOrder, loadShopOrderView, type ShopOrderRow } from '../shop/shop-order-store';
import { recordUnderTransactionId, type MaterialFields, refuseOtherPaymentUnderSameId } from '../donations/transaction-ids';
import type { ShopOrderView } from '../webhooks/payloads/views';

// A shop order's customer and addresses share the name and postal address fields, and their limits.
const nameFields = {
  first_name: requiredText(100),
  last_name: requiredText(100),
};
const postalAddressFields = {
  company: optionalText(200),
  department: optionalText(200),
  care_of: optionalText(200),
  po_box: optionalText(100),
  street: requiredText(200),
  street_number: optionalText(20),
  postal_code: requiredText(20),
  city: requiredText(100),
  country: countryInput,
};

const addressInput = z.object({ ...nameFields, ...postalAddressFields });

const customerInput = z.object({
  gender: genderInput,
  ...nameFields,
  email: emailInput,
  phone: optionalText(50),
  ...postalAddressFields,
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
    .meta({ multipleOf: 0.01 })
    .default(0),
  total_price_gross: nonNegativeAmountInput,
});

/** Every amount of an order, with its path: all are in the order's currency. */
function shopOrderAmounts(input: {
  items: Array<{ unit_price_net: number; unit_price_gross: number; total_price_gross: number }>;
  total_price_gross: number;
  total_vat: number;
  total_discount: number;
  shipping: { cost: number };
}) {
  const itemAmounts = input.items.flatMap((item, index) =>
    (['unit_price_net', 'unit_price_gross', 'total_price_gross'] as const).map((field) => ({ path: ['items', index, field], amount: item[field] })),
  );
  const totals = (['total_price_gross', 'total_vat', 'total_discount'] as const).map((field) => ({ path: [field], amount: input[field] }));
  return [...itemAmounts, ...totals, { path: ['shipping', 'cost'], amount: input.shipping.cost }];
}

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
    refineAmountsIn(input.currency, shopOrderAmounts(input), issues);
    if (input.payment.status === 'pending' && input.payment.method !== QR_INVOICE_METHOD) {
      issues.addIssue({ code: 'custom', path: ['payment', 'status'], message: 'only a QR invoice (INV) can be pending' });
    }
  });

export type ShopOrderInput = z.output<typeof shopOrderInput>;

function presentShopOrder(order: ShopOrderRow) {
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

/** An item's material fields, named as in the body (`items.0.quantity`); amounts in minor units. */
interface ShopOrderItemMaterial {
  article_number: string;
  quantity: number;
  unit_price_net: number;
  unit_price_gross: number;
  discount_percentage: number;
  total_price_gross: number;
}

/**
 * What makes an order the same payment: environment, currency, the customer (guest or registered, by e-mail), the
 * method, every item and every amount. Names, addresses, phone and the shipping method may differ in a repeat.
 */
function orderMaterial(order: {
  environment: string;
  currency: string;
  customerType: string;
  email: string;
  method: string;
  items: ShopOrderItemMaterial[];
  totalPriceGrossMinor: number;
  totalVatMinor: number;
  totalDiscountMinor: number;
  shippingCostMinor: number;
}): MaterialFields {
  return {
    environment: order.environment,
    currency: order.currency,
    customer_type: order.customerType,
    'customer.email': order.email.toLowerCase(),
    'payment.method': order.method,
    items: order.items,
    total_price_gross: order.totalPriceGrossMinor,
    total_vat: order.totalVatMinor,
    total_discount: order.totalDiscountMinor,
    'shipping.cost': order.shippingCostMinor,
  };
}

const recordedOrder = (view: ShopOrderView, row: ShopOrderRow) =>
  orderMaterial({
    ...view,
    items: view.items.map((item) => ({
      article_number: item.articleNumber,
      quantity: item.quantity,
      unit_price_net: item.unitPriceNetMinor,
      unit_price_gross: item.unitPriceGrossMinor,
      discount_percentage: item.discountPercentage,
      total_price_gross: item.totalPriceGrossMinor,
    })),
    environment: row.environment,
    customerType: row.contact_id === null ? 'guest' : 'registered',
    email: view.customer.email,
    method: row.payment_method,
    shippingCostMinor: row.shipping_cost_minor,
  });

const requestedOrder = (input: ShopOrderInput) =>
  orderMaterial({
    environment: input.environment,
    currency: input.currency,
    customerType: input.customer_type,
    email: input.customer.email,
    method: input.payment.method,
    items: input.items.map((item) => ({
      article_number: item.article_number,
      quantity: item.quantity,
      unit_price_net: minorOf(item.unit_price_net),
      unit_price_gross: minorOf(item.unit_price_gross),
      discount_percentage: item.discount_percentage,
      total_price_gross: minorOf(item.total_price_gross),
    })),
    totalPriceGrossMinor: minorOf(input.total_price_gross),
    totalVatMinor: minorOf(input.total_vat),
    totalDiscountMinor: minorOf(input.total_discount),
    shippingCostMinor: minorOf(input.shipping.cost),
  });

/**
 * A completed shop order (registered customer or guest): the order with its addresses and items, and its
 * shop_order.completed event. The shop computes prices, VAT and discounts; they are stored as given.
 * Idempotent on the transaction id: a repeat of the same order is answered with its record, another payment under a
 * used id (another order, or a donation payment's id) is a 409.
 */
export const recordShopOrder: PlatformCommand<ShopOrderInput, ShopOrderRecord> = async (trx, input, ctx) => {
  const transactionId = input.payment.transaction_id;
  const existing = await recordUnderTransactionId(trx, transactionId, 'shop_order', findShopOrderByTransactionId);
  if (existing) {
    refuseOtherPaymentUnderSameId(transactionId, recordedOrder(await loadShopOrderView(trx, existing), existing), requestedOrder(input));
    return { created: false, record: presentShopOrder(existing) };
  }

  const now = ctx.now();
  const { customer } = input;
  const contact =
    input.customer_type === 'registered'
      ? await upsertContact(trx, input.environment, { ...customer, street_number: customer.street_number ?? '' }, now)
      : null;
  const order = await insertShopOrder(trx, {
    environment: input.environment,
    contact_id: contact?.id ?? null,
    customer,
    currency: input.currency,
    total_price_gross_minor: minorOf(input.total_price_gross),
    total_vat_minor: minorOf(input.total_vat),
    total_discount_minor: minorOf(input.total_discount),
    transaction_id: transactionId,
    payment_method: input.payment.method,
    payment_status: input.payment.status,
    shipping_method: input.shipping.method,
    shipping_cost_minor: minorOf(input.shipping.cost),
    created_at: now,
    invoiceAddress: input.invoice_address,
    deliveryAddress: input.delivery_address ?? input.invoice_address,
    items: input.items.map((item) => ({
      article_number: item.article_number,
      quantity: item.quantity,
      unit_price_net_minor: minorOf(item.unit_price_net),
      unit_price_gross_minor: minorOf(item.unit_price_gross),
      discount_percentage: item.discount_percentage,
      total_price_gross_minor: minorOf(item.total_price_gross),
    })),
  });
  const view = await loadShopOrderView(trx, order);
  await recordCommandEvents(trx, ctx, {
    type: 'shop_order.completed',
    environment: input.environment,
    occurredAt: now,
    render: (features) => renderShopOrderCompleted(view, features),
  });
  return { created: true, record: presentShopOrder(order) };
};
