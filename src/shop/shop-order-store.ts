import type { Knex } from 'knex';
import type { Environment } from '../shared/environment';
import { SHOP_ADDRESS_FIELDS, type ShopAddress, type ShopCustomer, type ShopOrderView } from '../webhooks/payloads/views';
import type { PaymentStatus } from '../donations/payment-store';

/*
 * Shop orders with their addresses and items (tables `shop_orders`, `shop_order_addresses`, `shop_order_items`,
 * sequence `shop_order_number_seq`): the only module that queries them.
 */

const ORDERS = 'shop_orders';
const ADDRESSES = 'shop_order_addresses';
const ITEMS = 'shop_order_items';
const ORDER_NUMBERS = 'shop_order_number_seq';

/** A row of `shop_orders`; amounts in minor units, as the shop computed them. */
export interface ShopOrderRow {
  id: number;
  number: string;
  environment: Environment;
  /** Null for a guest order; the customer snapshot is what the order was placed with either way. */
  contact_id: number | null;
  customer: ShopCustomer;
  currency: string;
  total_price_gross_minor: number;
  total_vat_minor: number;
  total_discount_minor: number;
  transaction_id: string;
  payment_method: string;
  payment_status: PaymentStatus;
  shipping_method: string;
  shipping_cost_minor: number;
  created_at: Date;
}

export interface ShopOrderItemRow {
  id: number;
  shop_order_id: number;
  position: number;
  article_number: string;
  quantity: number;
  unit_price_net_minor: number;
  unit_price_gross_minor: number;
  discount_percentage: number;
  total_price_gross_minor: number;
}

type AddressRow = ShopAddress & { kind: 'invoice' | 'delivery' };

export type NewShopOrderItem = Omit<ShopOrderItemRow, 'id' | 'shop_order_id' | 'position'>;

export type NewShopOrder = Omit<ShopOrderRow, 'id' | 'number'> & {
  invoiceAddress: ShopAddress;
  deliveryAddress: ShopAddress;
  /** In position order. */
  items: NewShopOrderItem[];
};

export async function findShopOrderByTransactionId(trx: Knex.Transaction, transactionId: string): Promise<ShopOrderRow | undefined> {
  return trx(ORDERS).where({ transaction_id: transactionId }).first();
}

// The address columns are named from the payload's fields, never from the keys of the (request-derived) address.
const addressColumns = (address: ShopAddress) => Object.fromEntries(SHOP_ADDRESS_FIELDS.map((field) => [field, address[field]]));

/** Inserts the order under the next order number, with its two addresses and its items. */
export async function insertShopOrder(
  trx: Knex.Transaction,
  { invoiceAddress, deliveryAddress, items, customer, ...columns }: NewShopOrder,
): Promise<ShopOrderRow> {
  const {
    rows: [{ number }],
  } = await trx.raw<{ rows: { number: number }[] }>(`SELECT nextval('${ORDER_NUMBERS}') AS number`);
  const [order]: ShopOrderRow[] = await trx(ORDERS)
    .insert({ ...columns, number: String(number), customer: JSON.stringify(customer) })
    .returning('*');
  await trx(ADDRESSES).insert([
    { shop_order_id: order.id, kind: 'invoice', ...addressColumns(invoiceAddress) },
    { shop_order_id: order.id, kind: 'delivery', ...addressColumns(deliveryAddress) },
  ]);
  await trx(ITEMS).insert(items.map((item, index) => ({ shop_order_id: order.id, position: index + 1, ...item })));
  return order;
}

/** The order as the shop_order.completed payload shows it. */
export async function loadShopOrderView(trx: Knex.Transaction, order: ShopOrderRow): Promise<ShopOrderView> {
  const addresses: AddressRow[] = await trx(ADDRESSES).where({ shop_order_id: order.id });
  const items: ShopOrderItemRow[] = await trx(ITEMS).where({ shop_order_id: order.id }).orderBy('position');
  const address = (kind: AddressRow['kind']) => addresses.find((row) => row.kind === kind) as ShopAddress;
  return {
    number: order.number,
    createdAt: order.created_at,
    customer: order.customer,
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
