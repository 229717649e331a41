import { pino, type Logger as Pino } from 'pino';

export type AppLogger = Pino;

export const createLogger = (level: string): AppLogger =>
  pino({ level, base: { service: 'seckill' }, timestamp: pino.stdTimeFunctions.isoTime });
