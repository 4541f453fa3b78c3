import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Bot, type Context } from 'grammy';
import { FixedMenu } from '../../src/bot/ui/fixed-menu.js';
import { BOT_INFO, callbackUpdate, textUpdate } from '../helpers/updates.js';

type Call = { method: string; payload: Record<string, any> };

/** A bot with a two-button fixed menu, /menu to send it, and every API call recorded. */
function menuBot() {
  const bot = new Bot('1:test', { botInfo: BOT_INFO });
  const calls: Call[] = [];
  bot.api.config.use(async (_prev, method, payload) => {
    calls.push({ method, payload: payload as Record<string, any> });
    const result = method === 'sendMessage' ? { message_id: 5, date: 0, chat: { id: 1, type: 'private' }, text: '' } : true;
    return { ok: true, result } as never;
  });
  const pressed: string[] = [];
  const button = (label: string) => ({
    label: () => label,
    press: async (ctx: Context) => {
      pressed.push(label);
      await ctx.answerCallbackQuery();
    },
  });
  const menu = new FixedMenu<Context>(
    'm',
    { autoAnswer: false, fingerprint: () => 'layout:1', onMenuOutdated: (ctx) => ctx.answerCallbackQuery({ text: 'outdated' }) },
    [[button('One'), button('Two')]],
  );
  bot.use(menu);
  bot.command('menu', (ctx) => ctx.reply('Menu', { reply_markup: menu }));
  bot.on('callback_query', (ctx) => ctx.answerCallbackQuery({ text: 'not a menu button' }));
  return { bot, menu, calls, pressed };
}

async function sentButtons(h: ReturnType<typeof menuBot>): Promise<Record<string, string>> {
  await h.bot.handleUpdate(textUpdate({ id: 1 }, '/menu'));
  const keyboard = h.calls.find((c) => c.method === 'sendMessage')!.payload.reply_markup.inline_keyboard.flat();
  return Object.fromEntries(keyboard.map((b: { text: string; callback_data: string }) => [b.text, b.callback_data]));
}

describe('a fixed menu', () => {
  it('runs the button pressed on the menu as sent, once', async () => {
    const h = menuBot();
    const data = await sentButtons(h);
    await h.bot.handleUpdate(callbackUpdate({ id: 1 }, data.Two!));
    await h.bot.handleUpdate(callbackUpdate({ id: 1 }, data.One!));
    assert.deepEqual(h.pressed, ['Two', 'One']);
    assert.equal(h.calls.filter((c) => c.method === 'answerCallbackQuery').length, 2);
  });

  it('leaves a press on the menu drawn with another layout to the plugin, which runs no button', async () => {
    const h = menuBot();
    const data = await sentButtons(h);
    await h.bot.handleUpdate(callbackUpdate({ id: 1 }, data.One!.replace(/\/f[^/]*$/, '/fstale')));
    assert.deepEqual(h.pressed, []);
    assert.equal(h.calls.find((c) => c.method === 'answerCallbackQuery')?.payload.text, 'outdated');
  });

  it('passes other buttons and updates on', async () => {
    const h = menuBot();
    await h.bot.handleUpdate(callbackUpdate({ id: 1 }, 'c:view:1'));
    assert.equal(h.calls.find((c) => c.method === 'answerCallbackQuery')?.payload.text, 'not a menu button');
    assert.deepEqual(h.pressed, []);
  });

  it('gives every composer the same middleware (the plugin builds its own anew each time it is asked)', () => {
    const { menu } = menuBot();
    assert.equal(menu.middleware(), menu.middleware());
  });
});
