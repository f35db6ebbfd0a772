import { oneLine, shellWord } from './terminalText.js';

/** A table cell: control characters and line breaks escaped, cut to its width with an ellipsis, padded to it. */
export function cut(text: string | undefined, width: number): string {
  const t = oneLine(text ?? '');
  return (t.length > width ? `${t.slice(0, width - 1)}…` : t).padEnd(width);
}

/** An id cell: never cut (an operator pastes it into the next command), quoted for the shell, padded to the width. */
export function idCell(id: string | undefined, width: number): string {
  return (id === undefined ? '' : shellWord(id)).padEnd(width);
}
