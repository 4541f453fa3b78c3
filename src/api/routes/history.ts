import { callerOf } from '../plugins/auth.js';
import { ok } from '../envelope.js';
import { cardIdParams, envelope, noBody, otpList, requestedOtp, transactionPage, wallet } from '../http-schemas.js';
import { presentOtpList, presentRequestedOtp, presentTransactionPage, presentWallet } from '../presenters.js';
import { sendOnce } from '../idempotency.js';
import { bearerAuth, bodyErrorResponses, cardReferenceFrom, errorResponses, type ApiApp, type RouteDeps } from './route-kit.js';

/** Spec 4.12 to 4.15: transactions, OTPs, the wallet. */
export function historyRoutes(app: ApiApp, { core, clock }: RouteDeps): void {
  app.get(
    '/api/v1/cards/transactions',
    {
      schema: {
        summary: 'Card transactions, newest first, paginated',
        tags: ['spec'],
        security: bearerAuth,
        querystring: core.schemas.transactionsQuery,
        response: { 200: envelope(transactionPage), ...errorResponses },
      },
    },
    async (request) =>
      ok(
        presentTransactionPage(await core.listTransactions(request.caller, request.query)),
        'Transactions retrieved successfully',
        clock.now(),
      ),
  );

  const otpRoute = { config: { errorField: true } } as const;

  app.get(
    '/api/v1/cards/:id/otps',
    {
      ...otpRoute,
      schema: {
        summary: "The card's OTPs (id: the card UUID or its integer number); errors in `error`",
        tags: ['spec'],
        security: bearerAuth,
        params: cardIdParams,
        response: { 200: envelope(otpList), ...errorResponses },
      },
    },
    async (request) =>
      ok(
        presentOtpList(await core.listOtps(request.caller, cardReferenceFrom(request.params))),
        'OTPs retrieved successfully',
        clock.now(),
      ),
  );

  app.post(
    '/api/v1/cards/:id/otps/request',
    {
      config: { errorField: true, idempotent: 'otp' },
      schema: {
        summary: 'Retrieve an OTP for the card from e-mail; errors in `error`',
        tags: ['spec'],
        security: bearerAuth,
        params: cardIdParams,
        body: noBody,
        response: { 200: envelope(requestedOtp), ...bodyErrorResponses },
      },
    },
    async (request, reply) =>
      sendOnce(
        request,
        reply,
        200,
        (hooks) => core.requestOtp(request.caller, cardReferenceFrom(request.params), hooks),
        (requested) => ok(presentRequestedOtp(requested), 'OTP retrieved successfully', clock.now()),
      ),
  );

  app.get(
    '/api/v1/wallet/balance',
    {
      // The wallet is read with its token in one statement, not after a lookup of its own.
      config: { tokenCheckedByOperation: true },
      schema: { summary: 'Wallet balance', tags: ['spec'], security: bearerAuth, response: { 200: envelope(wallet), ...errorResponses } },
    },
    async (request) => ok(presentWallet(await core.walletBalance(callerOf(request))), 'Wallet balance retrieved successfully', clock.now()),
  );
}
