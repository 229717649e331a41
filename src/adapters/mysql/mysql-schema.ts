import { BigIntType, EntitySchema, type OptionalProps } from '@mikro-orm/core';

/** Persistence models: rows as MikroORM maps them. The domain knows nothing of them. */

export type EventRow = {
  [OptionalProps]?: 'position';
  position: number;
  eventId: string;
  streamId: string;
  streamVersion: number;
  type: string;
  schemaVersion: number;
  payload: unknown;
  metadata: unknown;
  correlationId: string;
  causationId: string | null;
  occurredAt: Date;
};

export type ProductRow = {
  [OptionalProps]?: 'id' | 'version';
  id: number;
  name: string;
  stock: number;
  version: number;
  perUserLimit: number;
  maxPerOrder: number;
  saleStartsAt: Date | null;
  saleEndsAt: Date | null;
  requirePathToken: boolean;
};

export type OrderRow = {
  orderId: string;
  userId: string;
  productId: number;
  quantity: number;
  status: string;
  reason: string | null;
  reservedAt: Date;
  updatedAt: Date;
};

export type OutboxRow = {
  [OptionalProps]?: 'id' | 'status' | 'attempts' | 'lastError';
  id: number;
  messageId: string;
  orderId: string;
  topic: string;
  key: string;
  payload: string;
  headers: unknown;
  status: number;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
};

const instant = { type: 'datetime', length: 3 } as const;

export const EventSchema = new EntitySchema<EventRow>({
  name: 'EventRow',
  tableName: 'event_store',
  properties: {
    position: { type: new BigIntType('number'), primary: true, autoincrement: true },
    eventId: { type: 'string', length: 36 },
    streamId: { type: 'string', length: 100 },
    streamVersion: { type: 'integer' },
    type: { type: 'string', length: 64 },
    schemaVersion: { type: 'smallint' },
    payload: { type: 'json' },
    metadata: { type: 'json' },
    correlationId: { type: 'string', length: 100 },
    causationId: { type: 'string', length: 100, nullable: true },
    occurredAt: instant,
  },
});

export const ProductSchema = new EntitySchema<ProductRow>({
  name: 'ProductRow',
  tableName: 'product',
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    name: { type: 'string', length: 200 },
    stock: { type: 'integer' },
    version: { type: 'integer' },
    perUserLimit: { type: 'integer' },
    maxPerOrder: { type: 'integer' },
    saleStartsAt: { ...instant, nullable: true },
    saleEndsAt: { ...instant, nullable: true },
    requirePathToken: { type: 'boolean', default: false },
  },
});

export const OrderSchema = new EntitySchema<OrderRow>({
  name: 'OrderRow',
  tableName: 'orders',
  properties: {
    orderId: { type: 'string', length: 64, primary: true },
    userId: { type: 'string', length: 64 },
    productId: { type: 'integer' },
    quantity: { type: 'integer' },
    status: { type: 'string', length: 16 },
    reason: { type: 'string', length: 32, nullable: true },
    reservedAt: instant,
    updatedAt: instant,
  },
});

export const OutboxSchema = new EntitySchema<OutboxRow>({
  name: 'OutboxRow',
  tableName: 'outbox_message',
  properties: {
    id: { type: new BigIntType('number'), primary: true, autoincrement: true },
    messageId: { type: 'string', length: 100 },
    orderId: { type: 'string', length: 64 },
    topic: { type: 'string', length: 100 },
    key: { type: 'string', length: 100 },
    payload: { type: 'text' },
    headers: { type: 'json' },
    status: { type: 'tinyint' },
    attempts: { type: 'integer' },
    lastError: { type: 'text', nullable: true },
    createdAt: instant,
    updatedAt: instant,
  },
});

export type ProjectionCheckpointRow = { name: string; position: number; updatedAt: Date };

export const ProjectionCheckpointSchema = new EntitySchema<ProjectionCheckpointRow>({
  name: 'ProjectionCheckpointRow',
  tableName: 'projection_checkpoint',
  properties: {
    name: { type: 'string', length: 64, primary: true },
    position: { type: new BigIntType('number') },
    updatedAt: instant,
  },
});

export const ENTITIES = [EventSchema, ProductSchema, OrderSchema, OutboxSchema, ProjectionCheckpointSchema];

/** MariaDB stores JSON as text and hands it back as a string; MySQL hands back the value. Accept both. */
export const fromJson = <T>(value: unknown): T =>
  (typeof value === 'string' ? JSON.parse(value) : value) as T;
