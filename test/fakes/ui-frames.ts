/**
 * The messages one WebSocket frame of `servebench ui` carries, as the app's transport reads them: an answer, one
 * pushed `{event}`, or several pushed together in `{events: [...]}` (split here into one `{event}` each).
 */
export function frameMessages(data: unknown): Array<Record<string, unknown>> {
  const message = JSON.parse(String(data)) as Record<string, unknown>;
  return Array.isArray(message.events) ? message.events.map((event: unknown) => ({ event })) : [message];
}
