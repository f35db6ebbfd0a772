import { InvalidArgumentError } from 'commander';
import { parseDuration } from './duration.js';

/** A duration option (`30m`, `2h`) in milliseconds; a bad one is a usage error naming the option. */
export function durationOption(value: string): number {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}
