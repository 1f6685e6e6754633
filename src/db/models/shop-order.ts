import { BaseModel } from './base';
import type { Environment } from '../../shared/environment';

export class ShopOrderAddressModel extends BaseModel {
  static tableName = 'shop_order_addresses';
  id!: number;
  shop_order_id!: number;
  kind!: 'invoice' | 'delivery';
  first_name!: string | null;
  last_name!: string | null;
  company!: string | null;
  department!: string | null;
  care_of!: string | null;
  po_box!: string | null;
  street!: string | null;
  street_number!: string | null;
  postal_code!: string | null;
  city!: string | null;
  country!: string | null;
}

export class ShopOrderItemModel extends BaseModel {
  static tableName = 'shop_order_items';
  id!: number;
  shop_order_id!: number;
  position!: number;
  article_number!: string;
  quantity!: number;
  unit_price_net_minor!: number;
  unit_price_gross_minor!: number;
  discount_percentage!: number;
  total_price_gross_minor!: number;
}

export class ShopOrderModel extends BaseModel {
  static tableName = 'shop_orders';
  id!: number;
  number!: string;
  environment!: Environment;
  contact_id!: number | null;
  customer!: Record<string, string | null>;
  currency!: string;
  total_price_gross_minor!: number;
  total_vat_minor!: number;
  total_discount_minor!: number;
  transaction_id!: string;
  payment_method!: string;
  payment_status!: 'completed' | 'pending';
  shipping_method!: string;
  shipping_cost_minor!: number;
  created_at!: Date;
}
