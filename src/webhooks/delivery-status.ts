// Kept only for src/admin/routes.ts, which the HTTP-layer rewrite replaces: import from src/delivery-rules instead.
export { DELIVERY_STATUSES } from '../delivery-rules/delivery-status';
