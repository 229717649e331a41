import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../../application/index.js';

export class SystemClock implements Clock {
  now(): string {
    return new Date().toISOString();
  }

  async sleep(ms: number): Promise<void> {
    await delay(ms);
  }
}
