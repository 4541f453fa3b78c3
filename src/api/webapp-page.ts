import { createHash } from 'node:crypto';

/** The page's texts in one language (from `locales/*.ftl`); `countdown` holds `%s` where the seconds go. */
export interface WebAppPageTexts {
  title: string;
  checking: string;
  number: string;
  cvv: string;
  expiry: string;
  copy: string;
  copied: string;
  countdown: string;
  hidden: string;
  unavailable: string;
}

export interface WebAppPage {
  html: string;
  /** The page's `Content-Security-Policy`: nothing but its own script and style (by hash) and requests to its own origin. */
  contentSecurityPolicy: string;
}

/**
 * Telegram's web clients frame Mini Apps (the native ones open them in a web view, which no
 * `frame-ancestors` applies to); nobody else may frame the page.
 */
const TELEGRAM_WEB = 'https://web.telegram.org';

/**
 * The Mini App page: self-contained (no script or style from anywhere else). It reads Telegram's init
 * data from the address's fragment (`#tgWebAppData=…`, or `Telegram.WebApp.initData` where a client
 * provides it) and the nonce from its query, wipes both from the address, posts them to `endpoint`, shows
 * the details with copy buttons and a countdown, then removes them from the page.
 *
 * @example
 * const page = webAppPage({ endpoint: '/webapp/card-details', texts: { en, ru } });
 * reply.header('content-security-policy', page.contentSecurityPolicy).type('text/html').send(page.html);
 */
export function webAppPage(options: { endpoint: string; texts: { en: WebAppPageTexts; ru: WebAppPageTexts } }): WebAppPage {
  // A data block, never run: `<` escaped so that no text can close the element.
  const config = JSON.stringify(options).replaceAll('<', '\\u003c');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(options.texts.en.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1 id="title"></h1>
<p id="status" role="status" aria-live="polite"></p>
</main>
<script type="application/json" id="config">${config}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
  const contentSecurityPolicy = [
    "default-src 'none'",
    `script-src '${sha256(SCRIPT)}'`,
    `style-src '${sha256(STYLE)}'`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${TELEGRAM_WEB}`,
  ].join('; ');
  return { html, contentSecurityPolicy };
}

const sha256 = (text: string) => `sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}`;

const escapeHtml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

const STYLE = `
:root { --bg: #fff; --text: #000; --hint: #707579; --button: #3390ec; --button-text: #fff; --panel: #f4f4f5; color-scheme: light dark; }
@media (prefers-color-scheme: dark) { :root { --bg: #17212b; --text: #f5f5f5; --hint: #708499; --panel: #232e3c; } }
body { margin: 0; font: 16px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--text); }
main { max-width: 28rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.25rem; margin: 0 0 .75rem; }
#status { color: var(--hint); }
#status.error { color: #e53935; }
.name { font-weight: 600; margin: 0 0 .5rem; }
dl { margin: 0; background: var(--panel); border-radius: .75rem; padding: .25rem 1rem; }
dt { color: var(--hint); font-size: .85rem; margin-top: .5rem; }
dd { margin: 0 0 .5rem; display: flex; align-items: center; justify-content: space-between; gap: .75rem; }
.value { font: 600 1.15rem/1.3 ui-monospace, Menlo, Consolas, monospace; letter-spacing: .04em; user-select: all; }
button { font: inherit; font-size: .85rem; border: 0; border-radius: .5rem; padding: .35rem .75rem; background: var(--button); color: var(--button-text); cursor: pointer; }
.countdown { color: var(--hint); text-align: center; }
.offscreen { position: fixed; left: -9999px; top: 0; }
`;

const SCRIPT = `
(() => {
  'use strict';
  const config = JSON.parse(document.getElementById('config').textContent);
  const fragment = new URLSearchParams(location.hash.slice(1));
  const webApp = window.Telegram && window.Telegram.WebApp;
  const initData = (webApp && webApp.initData) || fragment.get('tgWebAppData') || '';
  const nonce = new URLSearchParams(location.search).get('nonce') || '';
  // Neither stays in the address (history, a reload, a screenshot of the address bar).
  history.replaceState(null, '', location.pathname);

  let user = {};
  try { user = JSON.parse(new URLSearchParams(initData).get('user') || '{}') || {}; } catch (_) { user = {}; }
  const locale = String(user.language_code || '').startsWith('ru') ? 'ru' : 'en';
  const texts = config.texts[locale];
  document.documentElement.lang = locale;
  document.title = texts.title;
  applyTheme(fragment.get('tgWebAppThemeParams'));

  const main = document.querySelector('main');
  const status = document.getElementById('status');
  document.getElementById('title').textContent = texts.title;
  status.textContent = texts.checking;
  postEvent('web_app_ready');

  let secrets = null;
  let copied = false;

  if (!initData || !nonce) return fail();
  fetch(config.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ initData, nonce }),
    cache: 'no-store',
    credentials: 'omit',
    referrerPolicy: 'no-referrer',
  })
    .then((response) => (response.ok ? response.json() : Promise.reject(new Error('refused'))))
    .then((body) => show(body.data), fail);

  function show(details) {
    secrets = { number: details.number, cvv: details.cvv, expiry: details.expiry };
    const section = document.createElement('section');
    section.id = 'details';
    section.append(element('p', 'name', details.name));
    const list = document.createElement('dl');
    const fields = [
      ['number', texts.number, details.number.replace(/(\\d{4})(?=\\d)/g, '$1 ')],
      ['cvv', texts.cvv, details.cvv],
      ['expiry', texts.expiry, details.expiry],
    ];
    for (const [key, label, shown] of fields) {
      const value = element('span', 'value', shown);
      value.id = key;
      const button = element('button', 'copy', texts.copy);
      button.type = 'button';
      button.addEventListener('click', () => copy(key, button));
      const dd = document.createElement('dd');
      dd.append(value, button);
      list.append(element('dt', '', label), dd);
    }
    const countdown = element('p', 'countdown', '');
    countdown.id = 'countdown';
    section.append(list, countdown);
    main.append(section);
    status.textContent = '';
    const deadline = Date.now() + details.showSeconds * 1000;
    const tick = () => {
      const left = Math.ceil((deadline - Date.now()) / 1000);
      if (left <= 0) return blank(section);
      countdown.textContent = texts.countdown.replace('%s', String(left));
      setTimeout(tick, Math.min(1000, deadline - Date.now() - (left - 1) * 1000));
    };
    tick();
  }

  function blank(section) {
    for (const value of section.querySelectorAll('.value')) value.textContent = '';
    section.remove();
    secrets = null;
    if (copied && navigator.clipboard) navigator.clipboard.writeText('').catch(() => undefined);
    status.textContent = texts.hidden;
  }

  function fail() {
    status.textContent = texts.unavailable;
    status.className = 'error';
  }

  function copy(key, button) {
    const value = secrets && secrets[key];
    if (!value) return;
    const done = () => {
      copied = true;
      button.textContent = texts.copied;
      setTimeout(() => { button.textContent = texts.copy; }, 1500);
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(value).then(done, () => { if (copyBySelection(value)) done(); });
    } else if (copyBySelection(value)) done();
  }

  function copyBySelection(value) {
    const area = document.createElement('textarea');
    area.value = value;
    area.readOnly = true;
    area.className = 'offscreen';
    document.body.append(area);
    area.select();
    let ok = false;
    try { ok = document.execCommand('copy'); } catch (_) { ok = false; }
    area.remove();
    return ok;
  }

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    node.textContent = text;
    return node;
  }

  function applyTheme(raw) {
    let theme = {};
    try { theme = JSON.parse(raw || '{}') || {}; } catch (_) { return; }
    const colors = { bg_color: '--bg', text_color: '--text', hint_color: '--hint', button_color: '--button', button_text_color: '--button-text', secondary_bg_color: '--panel' };
    for (const [name, variable] of Object.entries(colors)) {
      if (/^#[0-9a-fA-F]{6}$/.test(String(theme[name]))) document.documentElement.style.setProperty(variable, theme[name]);
    }
  }

  // Telegram's clients listen for these without its script: a web view's proxy, or the frame's parent on the web.
  function postEvent(eventType) {
    try {
      if (window.TelegramWebviewProxy) window.TelegramWebviewProxy.postEvent(eventType, '');
      else if (window.parent !== window) window.parent.postMessage(JSON.stringify({ eventType, eventData: '' }), '${TELEGRAM_WEB}');
    } catch (_) { /* not in Telegram */ }
  }
})();
`;
