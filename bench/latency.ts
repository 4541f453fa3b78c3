/** Latency figures of a run (ms): the median, the 95th percentile, the worst and how many were measured. */
export interface Figures {
  p50: number;
  p95: number;
  max: number;
  count: number;
}

/** The figures of `latencies` (nearest-rank percentiles); undefined when nothing was measured. */
export function latencyFigures(latencies: number[]): Figures | undefined {
  if (latencies.length === 0) return undefined;
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1]!, count: sorted.length };
}
