export * from './events.js';
export * from './errors.js';
export * from './order.js';
export * from './product.js';
export * from './purchase-policy.js';
export * from './audit.js';
export * from './decider.js';
export * from './audit-checks.js';
