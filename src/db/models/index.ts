export * from './newsletter-subscription';
export * from './shop-order';
export * from './webhook';
