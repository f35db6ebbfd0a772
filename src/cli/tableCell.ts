/** A table cell: cut to its width with an ellipsis, padded to it. */
export function cut(text: string | undefined, width: number): string {
  const t = text ?? '';
  return (t.length > width ? `${t.slice(0, width - 1)}…` : t).padEnd(width);
}
