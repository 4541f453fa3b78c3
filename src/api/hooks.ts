/** A route's hooks option (one, several or none) as an array, so an `onRoute` hook can add one before or after the others. */
export function asArray<T>(value: T | readonly T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? [...(value as T[])] : [value as T];
}
