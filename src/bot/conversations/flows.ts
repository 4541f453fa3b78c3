import type { BotContext, ConversationContext } from '../context.js';
import type { Services } from '../services.js';
import { closeConversation } from './close.js';
import { createCardConversation, type CardTemplate } from './create-card.js';
import { declineFixConversation, type DeclineFixArgs } from './decline-fix.js';
import { dropButtons, type Convo } from './kit.js';
import { topupConversation } from './topup.js';
import { withdrawConversation } from './withdraw.js';

/** A flow started from a card's view: the card it acts on, and the view's message, redrawn once it is done. */
export interface CardFlowArgs {
  cardId: string;
  /** The message of the card view the flow started from; without it, nothing is redrawn. */
  viewMessageId?: number;
  /** An amount already given (`/topup 25`), in cents: the amount step is skipped when it is valid. */
  amount?: number;
}

/** What each flow is entered with. */
interface FlowArgs {
  topup: [card: CardFlowArgs];
  withdraw: [card: CardFlowArgs];
  close: [card: CardFlowArgs];
  /** A template: a new card like that one (a decline's "New card like this"). */
  createCard: [template?: CardTemplate];
  declineFix: [args: DeclineFixArgs];
}

type FlowName = keyof FlowArgs;

type Flows = { [N in FlowName]: (conversation: Convo, ctx: ConversationContext, ...args: FlowArgs[N]) => Promise<void> };

/** The conversation the flows run in, registered once with `createConversation`. */
export const FLOWS_CONVERSATION_ID = 'flow';

/**
 * The guided flows as one conversation, entered through `enterFlow` with the flow's name and arguments
 * (stored with the conversation's state). A chat runs one flow at a time anyway (entering one leaves
 * the other), and every update then passes one conversation layer instead of one per flow.
 */
export function flowsConversation(s: Services) {
  const flows: Flows = {
    topup: topupConversation(s),
    withdraw: withdrawConversation(s),
    close: closeConversation(s),
    createCard: createCardConversation(s),
    declineFix: declineFixConversation(s),
  };
  return async function flow<N extends FlowName>(
    conversation: Convo,
    ctx: ConversationContext,
    name: N,
    ...args: FlowArgs[N]
  ): Promise<void> {
    // Buttons another flow left waiting are spent now (the user changed course).
    await dropButtons(conversation, s, ctx);
    await flows[name](conversation, ctx, ...args);
    // However it ended (done, cancelled, refused), none of its buttons stays behind.
    await dropButtons(conversation, s, ctx);
  };
}

/**
 * Starts a guided flow, each with its own typed arguments; one already running in the chat is left
 * first (the user changed course).
 *
 * @example
 * await enterFlow.topup(ctx, { cardId, viewMessageId: ctx.callbackQuery?.message?.message_id });
 * await enterFlow.createCard(ctx);
 */
export const enterFlow: { [N in FlowName]: (ctx: BotContext, ...args: FlowArgs[N]) => Promise<void> } = {
  topup: (ctx, card) => enter(ctx, 'topup', card),
  withdraw: (ctx, card) => enter(ctx, 'withdraw', card),
  close: (ctx, card) => enter(ctx, 'close', card),
  createCard: (ctx, ...template) => enter(ctx, 'createCard', ...template),
  declineFix: (ctx, args) => enter(ctx, 'declineFix', args),
};

async function enter<N extends FlowName>(ctx: BotContext, name: N, ...args: FlowArgs[N]): Promise<void> {
  await ctx.conversation.exitAll();
  await ctx.conversation.enter(FLOWS_CONVERSATION_ID, name, ...args);
}
