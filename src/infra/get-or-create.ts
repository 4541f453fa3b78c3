/** The value a map holds for `key`, made by `make` and kept the first time it is asked for. */
export function getOrCreate<K extends object, V>(map: WeakMap<K, V>, key: K, make: () => V): V;
export function getOrCreate<K, V>(map: Map<K, V>, key: K, make: () => V): V;
export function getOrCreate<K extends object, V>(map: Map<K, V> | WeakMap<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
