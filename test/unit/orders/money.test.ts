import { describe, expect, it } from 'vitest';
import { addMoney, hasAtMostFourDecimals, multiplyMoney } from '../../../src/orders/money.js';

describe('money', () => {
  it('adds decimals exactly', () => {
    expect(addMoney(0.1, 0.2)).toBe(0.3);
    expect(addMoney(...Array(20).fill(0.1))).toBe(2);
  });
  it('multiplies a unit price by a quantity exactly', () => {
    expect(multiplyMoney(9.99, 3)).toBe(29.97);
  });
  it('accepts up to four decimal places', () => {
    expect(hasAtMostFourDecimals(1.2345)).toBe(true);
    expect(hasAtMostFourDecimals(1.23456)).toBe(false);
    expect(hasAtMostFourDecimals(Number.NaN)).toBe(false);
  });
});
