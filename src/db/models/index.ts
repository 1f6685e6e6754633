export * from './checkout';
export * from './contact';
export * from './newsletter-subscription';
export * from './shop-order';
export * from './webhook';
