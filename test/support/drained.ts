import { OutboxStatus, type OutboxDispatcher } from '../../src/application/index.js';
import type { MemoryDatabase } from '../../src/adapters/memory/memory-database.js';
import type { MemoryMessageBus } from '../../src/adapters/memory/memory-message-bus.js';
import { MEMORY_BUS, MEMORY_DATABASE } from '../../src/infrastructure/container.js';
import type { SeckillService } from '../../src/infrastructure/service.js';

/** Every publish started so far has settled and every consumer group of the memory bus has caught up. */
export const drainedInMemory = async (dispatcher: OutboxDispatcher, bus: MemoryMessageBus): Promise<void> => {
  do {
    await dispatcher.settle();
    await bus.whenIdle();
  } while (dispatcher.busy);
};

/**
 * Resolves once every accepted reservation has been decided and every release given back to the gate:
 * nothing is being published, and no outbox row waits to be sent or consumed. On the memory profile the
 * bus says so exactly; on the real one the outbox is polled (up to `timeoutMs`).
 */
export const drained = async (service: SeckillService, timeoutMs = 60_000): Promise<void> => {
  const { dispatcher, ports } = service.app;
  if (service.config.profile === 'memory')
    return drainedInMemory(dispatcher, service.container.get<MemoryMessageBus>(MEMORY_BUS));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await dispatcher.settle();
    const counts = await ports.outbox.countByStatus();
    const open = counts[OutboxStatus.PENDING] + counts[OutboxStatus.SENT] + counts[OutboxStatus.FAILED];
    if (open === 0 && !dispatcher.busy) return;
    if (Date.now() > deadline) throw new Error(`the pipeline still has ${open} outbox rows open`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/** The memory profile's tables, to see what a request wrote (or that it wrote nothing). */
export const memoryDatabaseOf = (service: SeckillService): MemoryDatabase =>
  service.container.get<MemoryDatabase>(MEMORY_DATABASE);
