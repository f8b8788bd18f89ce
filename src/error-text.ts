/** How a thrown value reads in a message: its text, and the first line of it. */

/** The message of anything thrown (an Error's message, else the value as text). */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The first line of an error's message (or of a text), for one-line errors, logs and reasons. */
export function firstLine(err: unknown): string {
  const message = errorMessage(err);
  const end = message.indexOf('\n');
  return end === -1 ? message : message.slice(0, end);
}
