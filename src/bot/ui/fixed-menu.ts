import { Menu, type MenuOptions } from '@grammyjs/menu';
import type { Context, MiddlewareFn } from 'grammy';
import type { InlineKeyboardMarkup } from 'grammy/types';

/** A button of a fixed menu: its label, and what a press on it does (it answers the press itself). */
export interface FixedButton<C extends Context> {
  label: (ctx: C) => string;
  press: MiddlewareFn<C>;
}

/**
 * A menu of fixed rows whose buttons neither navigate (no `ctx.menu`) nor send the menu, in which a press
 * on a button as the menu is drawn now runs that button at once. The plugin builds its middleware anew
 * each time a composer asks for it (on every update), and for a press lays the whole menu out again,
 * checks its fingerprint, builds a composer for the button and installs two API transformers: most of
 * a main menu press that is not the press's own work.
 *
 * The buttons' callback data come from the plugin's own drawing (`render`, the one it sends), learnt at
 * the first press, so a press is taken here only when its data is what the plugin would run as that same
 * button. Anything else (a menu drawn with another layout, every other update) goes through the plugin.
 *
 * @example
 * const menu = new FixedMenu<BotContext>('main', { fingerprint: () => 'main:1' }, [[{ label: (ctx) => ctx.t('menu-help'), press: help }]]);
 * bot.use(menu);
 */
export class FixedMenu<C extends Context> extends Menu<C> {
  readonly #presses: MiddlewareFn<C>[][];
  #middleware: MiddlewareFn<C> | undefined;
  #byData: Map<string, MiddlewareFn<C>> | undefined;

  constructor(id: string, options: MenuOptions<C>, rows: FixedButton<C>[][]) {
    super(id, options);
    // One block of rows rather than a chain of `.text()` and `.row()`: the plugin lays a menu out again
    // on every press it handles, one step per chained call.
    this.append(rows.map((row) => row.map((button) => ({ text: button.label, middleware: [button.press] }))));
    this.#presses = rows.map((row) => row.map((button) => button.press));
  }

  /**
   * The menu as drawn for `ctx`, as a plain keyboard: for an edit that turns another screen's message back
   * into the menu, where the plugin would draw a menu given as `reply_markup` only for an update that went
   * through its own middleware (the presses taken here do not).
   */
  async markup(ctx: C): Promise<InlineKeyboardMarkup> {
    return { inline_keyboard: await this.render(ctx) };
  }

  override middleware(): MiddlewareFn<C> {
    if (this.#middleware) return this.#middleware;
    const viaPlugin = super.middleware();
    this.#middleware = async (ctx, next) => {
      const data = ctx.callbackQuery?.data;
      if (data === undefined) return viaPlugin(ctx, next);
      this.#byData ??= await this.#buttonsByData(ctx);
      const press = this.#byData.get(data);
      return press ? press(ctx, next) : viaPlugin(ctx, next);
    };
    return this.#middleware;
  }

  /** Each button's press by the callback data the plugin draws it with. */
  async #buttonsByData(ctx: C): Promise<Map<string, MiddlewareFn<C>>> {
    const drawn = await this.render(ctx);
    const byData = new Map<string, MiddlewareFn<C>>();
    for (const [i, row] of drawn.entries()) {
      for (const [j, button] of row.entries()) {
        const press = this.#presses[i]?.[j];
        if (press && 'callback_data' in button) byData.set(button.callback_data, press);
      }
    }
    return byData;
  }
}
