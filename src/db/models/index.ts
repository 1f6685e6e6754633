export * from './shop-order';
export * from './webhook';
