import type { ConversationContext } from '../context.js';
import type { Services } from '../services.js';
import { closeConversation } from './close.js';
import { createCardConversation } from './create-card.js';
import type { Convo } from './kit.js';
import { topupConversation } from './topup.js';
import { withdrawConversation } from './withdraw.js';

export type FlowName = 'topup' | 'withdraw' | 'close' | 'createCard';

type Flow = (conversation: Convo, ctx: ConversationContext, ...args: never[]) => Promise<void>;

/**
 * The guided flows as one conversation, `flow`, entered with the flow's name and arguments. A chat
 * runs one flow at a time anyway (entering one leaves the other), and every update then passes one
 * conversation layer instead of one per flow.
 */
export function flowsConversation(s: Services) {
  const flows: Record<FlowName, Flow> = {
    topup: topupConversation(s),
    withdraw: withdrawConversation(s),
    close: closeConversation(s),
    createCard: createCardConversation(s),
  };
  return async function flow(conversation: Convo, ctx: ConversationContext, name: FlowName, ...args: unknown[]): Promise<void> {
    await (flows[name] as (conversation: Convo, ctx: ConversationContext, ...args: unknown[]) => Promise<void>)(conversation, ctx, ...args);
  };
}
