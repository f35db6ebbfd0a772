/**
 * Money is summed in ten-thousandths, as integers, so that 0.1 + 0.2 is 0.3 in `amountPaid`.
 * Four decimal places cover every ISO 4217 currency's minor unit.
 */
const scale = 10_000;

export function hasAtMostFourDecimals(value: number): boolean {
  return Number.isFinite(value) && Math.abs(value * scale - Math.round(value * scale)) < 1e-6;
}

export function addMoney(...amounts: number[]): number {
  return amounts.reduce((sum, amount) => sum + Math.round(amount * scale), 0) / scale;
}

export function multiplyMoney(amount: number, quantity: number): number {
  return (Math.round(amount * scale) * quantity) / scale;
}

/** The largest amount whose ten-thousandths are a safe integer: beyond it, sums are no longer exact. */
export const maxExactAmount = Math.floor(Number.MAX_SAFE_INTEGER / scale);

export function isExactAmount(value: number): boolean {
  return Math.abs(value) <= maxExactAmount;
}
