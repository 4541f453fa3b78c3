import { createHmac } from 'node:crypto';

export interface SignedUser {
  id: number;
  first_name?: string;
  language_code?: string;
}

/**
 * Mini App init data as a Telegram client receives it, signed the way Telegram documents it (written here
 * apart from the library the server validates with): the fields sorted as `key=value` lines, HMAC-SHA256
 * under the key HMAC-SHA256("WebAppData", bot token), in hex as `hash`.
 */
export function signInitData(botToken: string, user: SignedUser, authDate: Date, extra: Record<string, string> = {}): string {
  const fields: Record<string, string> = {
    query_id: 'AAHdF6IQAAAAAN0XohDhrOrc',
    user: JSON.stringify({ first_name: 'Alice', language_code: 'en', ...user }),
    auth_date: String(Math.floor(authDate.getTime() / 1000)),
    signature: 'c2lnbmF0dXJlLW9mLXRoZS10aGlyZC1wYXJ0eS1zY2hlbWU',
    ...extra,
  };
  const checkString = Object.keys(fields)
    .sort()
    .map((key) => `${key}=${fields[key]}`)
    .join('\n');
  const secret = createHmac('sha256', 'WebAppData').update(botToken).digest();
  const hash = createHmac('sha256', secret).update(checkString).digest('hex');
  return new URLSearchParams({ ...fields, hash }).toString();
}

/** The fragment Telegram appends to a Mini App's address: the init data, the client's version and platform. */
export function launchFragment(initData: string): string {
  return `#${new URLSearchParams({ tgWebAppData: initData, tgWebAppVersion: '8.0', tgWebAppPlatform: 'web' }).toString()}`;
}
