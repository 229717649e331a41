/**
 * The V8 settings a service process runs with (`npm start`, `bin/seckill`, `npm run cluster`, the bench and the
 * tests' processes pass them to node). A young generation of 64 MB per semi-space instead of V8's 16: under a
 * flood every request in flight keeps its objects alive for its whole answer (tens of milliseconds behind the
 * group commit), and with the default each scavenge, every ~100 ms, copied them and promoted most of them to the
 * old generation, which then needed a full collection every few seconds. docs/operations.md gives the figures.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
