/**
 * Waits until `check` holds, polling every `everyMs`; after `timeoutMs` fails naming `what` (and what
 * `seen` then says). For what a test cannot be told of and must look for: a process's output, a file's
 * size, a message another process sends.
 */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  { timeoutMs = 10_000, everyMs = 20, seen }: { timeoutMs?: number; everyMs?: number; seen?: () => string } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}${seen ? `; seen ${seen()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
