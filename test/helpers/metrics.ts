/** One sample of a Prometheus text scrape: `name{labels} value`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Fetches `/metrics` over HTTP, as Prometheus does; fails on anything but 200. */
export async function scrape(url: string): Promise<Sample[]> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status}`);
  return parseSamples(await response.text());
}

function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of `name` with exactly these labels, or undefined when the scrape has no such sample. */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels);
  return samples.find(
    (s) => s.name === name && Object.keys(s.labels).length === wanted.length && wanted.every(([k, v]) => s.labels[k] === v),
  )?.value;
}

/** Whether the scrape has any sample of a metric whose name starts with `prefix`. */
export const hasMetric = (samples: Sample[], prefix: string) => samples.some((s) => s.name.startsWith(prefix));

/** Every label value in the scrape: what must never hold a token, a chat id or a message's text. */
export const labelValues = (samples: Sample[]) => samples.flatMap((s) => Object.values(s.labels));
