// Fitting text into the bounded string types of the schema (ShortText: 1,024 characters), so a
// diagnostic built from peer or user input can never make its own event invalid.

/** The `maxLength` of the schema's ShortText. */
export const SHORT_TEXT_MAX = 1024;

/**
 * `text` cut to at most `max` UTF-16 units (so at most `max` characters as the schema counts them),
 * never between the two halves of a surrogate pair; a cut text ends in "…".
 */
export function fitText(text: string, max: number = SHORT_TEXT_MAX): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // a high surrogate whose pair would be cut off
  return `${text.slice(0, end)}…`;
}
