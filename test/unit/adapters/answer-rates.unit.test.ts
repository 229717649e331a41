import { describe, expect, it } from '@jest/globals';
import { AnswerRates } from '../../../src/adapters/http/answer-rates.js';

describe('AnswerRates', () => {
  it('reports the last whole second, not the one filling up', () => {
    let now = 10_000;
    const rates = new AnswerRates(() => now);
    for (let i = 0; i < 3; i++) rates.mark(true);
    for (let i = 0; i < 5; i++) rates.mark(false);
    expect(rates.perSecond()).toEqual({ acceptedPerSecond: 0, rejectedPerSecond: 0 });
    now = 11_200;
    rates.mark(false);
    expect(rates.perSecond()).toEqual({ acceptedPerSecond: 3, rejectedPerSecond: 5 });
    now = 12_000;
    expect(rates.perSecond()).toEqual({ acceptedPerSecond: 0, rejectedPerSecond: 1 });
  });

  it('drops to zero after a quiet spell', () => {
    let now = 0;
    const rates = new AnswerRates(() => now);
    rates.mark(true);
    now = 5_000;
    expect(rates.perSecond()).toEqual({ acceptedPerSecond: 0, rejectedPerSecond: 0 });
  });
});
