import type { Executor } from '../../db/schema.js';

/** A chat an edge (the bot) has linked to a user through one of the user's API tokens. */
export interface LinkedChat {
  chatId: number;
  userId: string;
  tokenHash: string;
  linkedAt: string;
}

/** Why a chat stopped being linked; the chat is told once, in these words' translation. */
export type UnlinkReason = 'token_revoked' | 'removed_by_operator';

/**
 * The links edges keep between chats and tokens, as the core sees them: it ends them in the same
 * transaction that revokes their token, so no push, flow or button outlives a revocation. The bot
 * implements it over its own tables; the composition root hands it to the core.
 */
export interface ChatLinkPort {
  /** Ends every link made with one of `tokenHashes` (and the chats' pending flows); returns the chats. */
  endForTokens(ex: Executor, tokenHashes: readonly string[], at: string): Promise<number[]>;
  /** Ends one chat's link; false when the chat was not linked. */
  endChat(ex: Executor, chatId: number, reason: UnlinkReason, at: string): Promise<boolean>;
  list(ex: Executor, filter?: { userId?: string }): Promise<LinkedChat[]>;
}

/** For a core with no edge that links chats (tests of the core alone). */
export const noChatLinks: ChatLinkPort = {
  endForTokens: async () => [],
  endChat: async () => false,
  list: async () => [],
};
