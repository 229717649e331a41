/** Types of what eslint.config.js exports, for the architecture test that runs its domain-event rule. */
export declare const DOMAIN_EVENT_TYPES: string[];
export declare const eventsOnlyFromTheDomain: { selector: string; message: string };
declare const config: unknown;
export default config;
