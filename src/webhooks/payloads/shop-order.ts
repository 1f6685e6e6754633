import { toAmount } from '../../shared/money';
import { formatTimestamp } from '../../shared/time';
import { searchKeys } from '../event-search-keys';
import type { PayloadFeatures } from '../payload-versions';
import type { ShopOrderData } from '../schemas/payload-schemas';
import type { RenderedEvent } from './rendered';
import { SHOP_ADDRESS_FIELDS, SHOP_CUSTOMER_FIELDS, type ShopOrderView } from './views';

// Listed field by field: the stored snapshots are JSON objects whose key order the database does not keep.
const pick = <T extends object>(fields: readonly (keyof T)[], source: T): T =>
  Object.fromEntries(fields.map((field) => [field, source[field] ?? null])) as T;

export function renderShopOrderCompleted(order: ShopOrderView, features: PayloadFeatures): RenderedEvent<ShopOrderData>[] {
  const data: ShopOrderData = {
    shop_order: {
      id: order.number,
      created_at: formatTimestamp(order.createdAt, features.timestamps),
      customer: pick(SHOP_CUSTOMER_FIELDS, order.customer),
      invoice_address: pick(SHOP_ADDRESS_FIELDS, order.invoiceAddress),
      delivery_address: pick(SHOP_ADDRESS_FIELDS, order.deliveryAddress),
      items: order.items.map((item) => ({
        article_number: item.articleNumber,
        quantity: item.quantity,
        unit_price_net: toAmount(item.unitPriceNetMinor),
        unit_price_gross: toAmount(item.unitPriceGrossMinor),
        discount_percentage: item.discountPercentage,
        total_price_gross: toAmount(item.totalPriceGrossMinor),
      })),
      currency: order.currency,
      total_price_gross: toAmount(order.totalPriceGrossMinor),
      total_vat: toAmount(order.totalVatMinor),
      total_discount: toAmount(order.totalDiscountMinor),
      payment: {
        transaction_id: order.payment.transactionId,
        method: order.payment.method,
        status: order.payment.status,
      },
      shipping: { method: order.shipping.method, cost: toAmount(order.shipping.costMinor) },
    },
  };
  const { shop_order } = data;
  return [
    {
      key: `shop_order:${order.number}`,
      data,
      searchKeys: searchKeys({ transactionId: shop_order.payment.transaction_id, email: shop_order.customer.email, references: [shop_order.id] }),
    },
  ];
}
