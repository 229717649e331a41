/**
 * The V8 settings a service process runs with (`npm start`, `bin/seckill`, `npm run cluster`, the bench and the
 * tests' processes pass them to node). An old generation bounded at 384 MB: V8 sizes the steps by which it lets
 * the old generation grow between full collections from that bound — up to 4× the live heap when the bound is
 * over 2 GB (its default on a machine of this size), about 1.35× at 384 MB — so the heap stays near what is live
 * (about 50 MB for an API, with its caches bounded) instead of growing to hundreds of MB of garbage under a flood.
 * The young generation at V8's 16 MB per semi-space, said explicitly: with a bounded old generation V8 would
 * otherwise shrink it in proportion. The price is CPU, as the API collects more often: 10–35 % more per accepted
 * order than with 64 MB semi-spaces and no bound, 1–18 % per flood answer, since the order route stopped promoting
 * what express left on each request (it was 40 % and more before). docs/operations.md gives the figures.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16', '--max-old-space-size=384'];
