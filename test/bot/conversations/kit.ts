import type { ApiCall } from '../harness.js';

/** Cents as the English texts show money: "$1,234.50". */
export const usd = (cents: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(cents / 100);

/** The callback data of the button labelled `label` among the keyboards sent in `calls`. */
export function buttonData(calls: ApiCall[], label: string | RegExp): string {
  const buttons = calls.flatMap((c) => (c.payload.reply_markup?.inline_keyboard ?? []).flat()) as {
    text: string;
    callback_data?: string;
  }[];
  const found = buttons.reverse().find((b) => (typeof label === 'string' ? b.text.includes(label) : label.test(b.text)));
  if (!found?.callback_data) throw new Error(`no button ${String(label)} among: ${buttons.map((b) => b.text).join(', ')}`);
  return found.callback_data;
}
