// Main thread. Query string to a plain object; a repeated name keeps its last value.
export function parseQuery(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (raw === '') return out;
  for (const [name, value] of new URLSearchParams(raw)) out[name] = value;
  return out;
}
