// Types of build.mjs for the TypeScript that imports it (the tests' process helpers).
export const ROOT: string;
export const DIST: string;
export const STAMP: string;
export function findTsc(): string | null;
export function build(): number;
/** Why dist/ must be (re)built, or null when it is up to date. */
export function staleness(): string | null;
