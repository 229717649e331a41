import { describe, expect, it } from '@jest/globals';
import {
  decide,
  evolve,
  initialOrderState,
  OrderAlreadyExists,
  OrderNotFound,
  type OrderCommand,
  type OrderEvent,
  type OrderState,
} from '../../../src/domain/index.js';
import { deciderSpecification } from '../../support/decider.js';
import { orderId, orderReserved } from './builders.js';

// The helper must be able to fail, or every decider test built on it proves nothing.
const given = deciderSpecification<OrderCommand, OrderEvent, OrderState>({
  decide,
  evolve,
  initialState: initialOrderState,
});
const commit: OrderCommand = { type: 'CommitStock', orderId, now: '2030-05-01T11:00:00.000Z' };

describe('deciderSpecification', () => {
  it('fails then() when the events differ', () => {
    expect(() => given([orderReserved()]).when(commit).then([])).toThrow();
  });

  it('fails then() when decide throws, passing the error on', () => {
    expect(() => given([]).when(commit).then([])).toThrow(OrderNotFound);
  });

  it('fails thenThrows() when decide returns events instead', () => {
    expect(() => given([orderReserved()]).when(commit).thenThrows(OrderNotFound)).toThrow(
      /expected OrderNotFound, but decide returned \[\{"type":"StockCommitted"/,
    );
  });

  it('fails thenThrows() when decide throws another error type', () => {
    expect(() => given([]).when(commit).thenThrows(OrderAlreadyExists)).toThrow();
  });

  it('returns the thrown error so its fields can be checked', () => {
    expect(given([]).when(commit).thenThrows(OrderNotFound).orderId).toBe(orderId);
  });
});
