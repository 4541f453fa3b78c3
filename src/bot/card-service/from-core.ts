/**
 * What the bot takes from the core as it is, whichever service it talks to: the coded refusals (one
 * closed set, the interface's), money types, token hashing, the clock, and the types of what only our
 * embedded core offers (events, funding, what its views add to the interface's objects). Only this folder imports `src/core` (test/bot/seam.test.ts).
 */
export type { ChatLinkPort, UnlinkReason } from '../../core/operations/chat-links.js';
export type { Clock } from '../../infra/clock.js';
export type { DepositError, DepositErrorCode } from '../../core/rules/deposit-errors.js';
export { isDepositError } from '../../core/rules/deposit-errors.js';
export type { DepositRequest } from '../../core/funding/deposits.js';
export { NOTE_MAX_LENGTH } from '../../core/funding/deposits.js';
export type { ErrorCode, ParamsOf, ValidationIssue } from '../../core/rules/errors.js';
export { CardServiceError, isCardServiceError } from '../../core/rules/errors.js';
export type { CoreEvent, EventOutbox, PendingEvent } from '../../core/operations/events.js';
export type { Funding } from '../../core/funding/funding.js';
export type { CheckoutRefusal, PaidCharge, PaymentCredit } from '../../core/funding/payments.js';
export { ISSUE_BOUNDS, isBoundIssue, toValidationIssue, type BoundIssueCode } from '../../core/rules/schemas.js';
export type { CardDataCipher } from '../../core/keys/secrets.js';
export { hashToken, isApiTokenShaped } from '../../core/keys/secrets.js';
export type { CardService } from '../../core/service.js';
export type { ServiceStats } from '../../core/admin/stats.js';
export type { QuotedRefusal } from '../../core/operations/views.js';
/** The core's views: the interface's objects with what ours always fills (the port leaves that optional). */
export type * as ours from '../../core/operations/views.js';
export { CATEGORY_GROUP_NAMES, type CategoryGroup } from '../../core/authorization/categories.js';
export type { DeclineCode, DeclineFix, LimitControl } from '../../core/authorization/declines.js';
export type { AutoTopupEvent, CardTransactionEvent } from '../../core/operations/events.js';
export type { AutoTopupInput, CardControlsView, ControlsInput } from '../../core/operations/card-controls.js';
export { CONTROL_AMOUNT_MAX } from '../../core/rules/control-schemas.js';
export type { AutoTopup } from '../../core/authorization/controls.js';
