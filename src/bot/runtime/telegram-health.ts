import { HttpError, type Transformer } from 'grammy';

/**
 * Whether Telegram answers this process's Bot API calls, for `/readyz`: a transformer watches every call
 * (polling, pushes, replies) and the bot counts as disconnected from the first call that could not reach
 * Telegram or that Telegram failed (5xx) until the next one it answers. A refusal (4xx) is an answer.
 */
export function telegramHealth(): { transformer: Transformer; connected(): boolean } {
  let failing = false;
  const transformer: Transformer = async (prev, method, payload, signal) => {
    try {
      const response = await prev(method, payload, signal);
      failing = !response.ok && response.error_code >= 500;
      return response;
    } catch (error) {
      // Not an abort of ours (a stopping poller): the network or Telegram's front failed.
      if (error instanceof HttpError) failing = true;
      throw error;
    }
  };
  return { transformer, connected: () => !failing };
}
