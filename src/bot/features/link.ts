import { Composer, GrammyError } from 'grammy';
import { isCardServiceError, hashToken } from '../card-service/from-core.js';
import type { BotContext } from '../context.js';
import { duration, refusalMessage, toRefusal } from '../ui/refusal-texts.js';
import { localeOf } from '../ui/i18n.js';
import { getOrCreate } from '../../infra/get-or-create.js';
import { loggableError } from '../../infra/log-safe.js';
import { type Counts, LocalWindowCounts, WindowCounts } from '../../infra/window-counts.js';
import { ServiceBusyError } from '../../remote/budget.js';
import { chatLocaleKey } from '../store/kv-keys.js';
import { readChatRecord } from '../store/chat-record.js';
import { writeKv } from '../store/kv.js';
import type { Services } from '../services.js';
import { mainMenuText, type MainMenu } from './menu.js';

/** Our API tokens are caught earlier (token-scan.ts); in an unlinked chat anything token-like is tried as one. */
const TOKEN_SHAPE = /^\S{16,200}$/;

/**
 * How often one chat may have a token checked by a remote service (remote mode): each check is a request
 * in the service's budget, and anyone who writes to the bot can send texts that look like tokens. One more
 * is answered at once with the wait, and asks the service nothing.
 */
export const LINK_ATTEMPTS = { limit: 3, windowMs: 60_000 } as const;

/** The link attempts counted per chat; with Redis, one count for every process. */
const linkAttempts = new WeakMap<Services, Counts>();

/** Counts a link attempt of the chat; the seconds to wait when it is one too many. */
async function tooManyAttempts(s: Services, chatId: number): Promise<number | undefined> {
  const counts = getOrCreate(linkAttempts, s, () => (s.redis ? new WindowCounts(s.redis, s.logger) : new LocalWindowCounts()));
  const [attempt] = await counts.count([{ key: `bot:link:${chatId}`, windowMs: LINK_ATTEMPTS.windowMs }]);
  return attempt!.count > LINK_ATTEMPTS.limit ? attempt!.ttlMs / 1000 : undefined;
}

/**
 * Reads a private chat's link and conversation state in one statement, for the conversations plugin
 * (src/bot/runtime/storage.ts) and `callerMiddleware`. Read on every update, never kept: a link or a flow ended
 * by another process is seen at once.
 */
export function chatRecordReader(s: Services) {
  return async (ctx: BotContext, next: () => Promise<void>) => {
    if (ctx.chat?.type === 'private') ctx.chatRecord = await readChatRecord(s.db, ctx.chat.id);
    await next();
  };
}

/**
 * Resolves the chat's link to its account on every update, so a revoked token stops working at once.
 * A revoked link is forgotten, and the user told once. The link is the one `chatRecordReader` read,
 * when it ran.
 */
export function callerMiddleware(s: Services) {
  return async (ctx: BotContext, next: () => Promise<void>) => {
    const chat = ctx.chat?.type === 'private' ? ctx.chat : undefined;
    const link = chat && (ctx.chatRecord ? ctx.chatRecord.link : await s.links.find(chat.id));
    if (link) {
      try {
        ctx.account = await s.cards.account(link);
        ctx.link = link;
      } catch (error) {
        if (!isCardServiceError(error) || error.code !== 'INVALID_TOKEN') throw error;
        // A revocation ends the link and queues the chat's notice itself; only a link it missed is told here.
        const stillLinked = await s.links.delete(link.chatId);
        await ctx.conversation.exitAll();
        if (stillLinked) await ctx.reply(ctx.t('link-revoked', { message: refusalMessage(ctx.t, toRefusal(error)) }));
      }
    } else if (chat && Object.keys(ctx.conversation.active()).length > 0) {
      // A link ended elsewhere (a revocation, `links remove`) ends the chat's flow too, even one this
      // process still holds in memory.
      await ctx.conversation.exitAll();
    }
    await next();
  };
}

/**
 * Deletes the message that carried a token (new, edited or a channel post). A failure (too old, no
 * rights in a group) is logged without the content and returned as `false`.
 */
export async function deleteTokenMessage(ctx: BotContext): Promise<boolean> {
  const messageId = ctx.msg!.message_id;
  try {
    await ctx.api.deleteMessage(ctx.chat!.id, messageId);
    return true;
  } catch (error) {
    // Deleted by the user already: as good as done.
    if (error instanceof GrammyError && /message to delete not found/i.test(error.description)) return true;
    ctx.logger.warn({ chatId: ctx.chat!.id, messageId, err: loggableError(error) }, 'could not delete a message holding an API token');
    return false;
  }
}

/** Asks the chat to delete the token message the bot could not, replying to it. */
export function replyNotDeleted(ctx: BotContext, text = ctx.t('token-not-deleted')) {
  return ctx.reply(text, { reply_parameters: { message_id: ctx.msg!.message_id, allow_sending_without_reply: true } });
}

/**
 * Links the chat to `token` (leaving any flow under the old link); the message carrying it is deleted already.
 * In front of a remote service a chat's checks are limited (`LINK_ATTEMPTS`), and a check the service's
 * budget has no room for is refused at once: the chat is told to wait, or to try again shortly.
 */
export async function linkChat(s: Services, mainMenu: MainMenu, ctx: BotContext, token: string): Promise<void> {
  if (s.cards.mode === 'remote') {
    const wait = await tooManyAttempts(s, ctx.chat!.id);
    if (wait !== undefined) return void (await ctx.reply(ctx.t('link-too-many', { wait: duration(ctx.t, wait) })));
  }
  try {
    const account = await s.cards.checkToken(token);
    const chatId = ctx.chat!.id;
    const sealedToken = s.cards.sealToken?.(token, chatId);
    await s.links.save(
      { chatId, userId: account.userId, tokenHash: hashToken(token), ...(sealedToken ? { sealedToken } : {}) },
      s.clock.now(),
    );
    await writeKv(s.db, chatLocaleKey(ctx.chat!.id), localeOf(ctx), s.clock.now());
    await ctx.conversation.exitAll();
    ctx.account = account;
    await s.cards.linked?.(account);
    ctx.logger.info({ userId: account.userId, chatId: ctx.chat!.id }, 'chat linked');
    await ctx.reply(`${ctx.t('link-ok')}\n\n${mainMenuText(ctx)}`, { reply_markup: mainMenu });
  } catch (error) {
    if (error instanceof ServiceBusyError) return void (await ctx.reply(ctx.t('link-busy')));
    if (!isCardServiceError(error)) throw error;
    await ctx.reply(ctx.t('link-refused', { message: refusalMessage(ctx.t, toRefusal(error)) }));
  }
}

export function linkFeature(s: Services, mainMenu: MainMenu): Composer<BotContext> {
  const outer = new Composer<BotContext>();
  const composer = outer.chatType('private');
  // Deleted first: the token must not linger in the chat, whatever happens next.
  const link = async (ctx: BotContext, token: string) => {
    if (!(await deleteTokenMessage(ctx))) await replyNotDeleted(ctx);
    await linkChat(s, mainMenu, ctx, token);
  };

  composer.command('start', async (ctx) => {
    if (ctx.account) await ctx.reply(`${ctx.t('start-linked')}\n\n${mainMenuText(ctx)}`, { reply_markup: mainMenu });
    else await ctx.reply(ctx.t('start-welcome'));
  });
  composer.command('link', async (ctx) => {
    const token = ctx.match.trim();
    if (!token) {
      await ctx.reply(ctx.t('start-welcome'));
      return;
    }
    await link(ctx, token);
  });
  composer.command('unlink', async (ctx) => {
    const removed = await s.links.delete(ctx.chat.id);
    ctx.account = undefined;
    await ctx.conversation.exitAll();
    await ctx.reply(ctx.t(removed ? 'unlink-done' : 'unlink-none'));
  });
  // Our own tokens never get this far (features/pasted-token.ts); in a chat not linked yet, any other
  // token-like text is taken as a token too: deleted at once and tried.
  composer.on('message:text').filter(
    (ctx) => !ctx.account && !ctx.msg.text.startsWith('/') && TOKEN_SHAPE.test(ctx.msg.text.trim()),
    (ctx) => link(ctx, ctx.msg.text.trim()),
  );
  composer.on('message').filter(
    (ctx) => !ctx.account,
    (ctx) => ctx.reply(ctx.t('not-linked')),
  );
  return outer;
}

/**
 * Everything below needs a linked chat, except what links one (/start, /link, /unlink and a plain
 * text taken as a token); anything else in an unlinked chat gets a clear prompt.
 */
export function requireLinked() {
  return async (ctx: BotContext, next: () => Promise<void>) => {
    if (ctx.account) return next();
    const text = ctx.message?.text;
    if (text !== undefined && (!text.startsWith('/') || /^\/(start|link|unlink)\b/.test(text))) return next();
    if (ctx.callbackQuery) await ctx.answerCallbackQuery({ text: ctx.t('not-linked'), show_alert: true });
    else if (ctx.message) await ctx.reply(ctx.t('not-linked'));
  };
}
