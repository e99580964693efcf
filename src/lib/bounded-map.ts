// Any thread. The eviction rule of the service's bounded caches that need nothing done on eviction: a Map keeps
// insertion order, so its first key is the oldest, and that one leaves to make room.

/** Sets `key` to `value`, first dropping the oldest entry when `map` already holds `max` entries. */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (map.size >= max && !map.has(key)) map.delete(map.keys().next().value!);
  map.set(key, value);
}
