import { PermanentMessageError } from '../idempotency/index.js';
import type { ConsumeResult } from './consumerDefinition.js';

/** The longest reason a remembered rejection keeps: the rejection record holds the whole of it. */
const maxRememberedDescription = 500;

/**
 * What the memory keeps of a rejection: its code, its reason cut to a bound (a sender chooses how
 * long a type name or a key is, and a flood's entries would otherwise be kept whole, 10,000 times),
 * no cause and no second copy of the key in the error's message.
 */
export function rememberedForm(result: ConsumeResult, error: PermanentMessageError): ConsumeResult {
  const { description } = error;
  const kept =
    description.length > maxRememberedDescription
      ? `${description.slice(0, maxRememberedDescription)}… (cut; the rejection record holds the whole reason)`
      : description;
  return { ...result, outcome: { kind: 'invalid', error: new PermanentMessageError(error.code, kept) } };
}

/** The characters a remembered result holds. */
export function textHeldBy(result: ConsumeResult): number {
  const error = result.outcome.kind === 'invalid' ? result.outcome.error : undefined;
  return (
    (error ? error.description.length + error.message.length : 0) + (result.dedupKey?.length ?? 0) + (result.type?.length ?? 0) + (result.orderId?.length ?? 0)
  );
}
