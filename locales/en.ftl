start-welcome =
    Hi! I run your prepaid virtual cards: create, fund, freeze and close them, see balances, transactions and OTP codes.
    To begin, send me your API token (or /link TOKEN). I delete the message holding it at once.
start-linked = You are linked. Here is your menu.
link-checking = Checking the token…
link-ok = Linked. Here is your menu.
link-refused = { $message }. Check the token with your administrator and send it again.
link-too-many = Too many tries to link this chat. Wait { $wait }, then send your API token again.
link-busy = The card service is busy: the token was not checked. Send it again in a minute.
link-revoked = This chat's token no longer works ({ $message }). Send a new API token to link again.
token-not-deleted = I could not delete this message, and it holds an API token. Please delete it yourself.
token-in-group = That was an API token. Anyone in this chat may have seen it: revoke it with your administrator and get a new one. Send tokens only to me, in a private chat.
token-forwarded = I deleted that forwarded API token here, but it is still in the chat it was forwarded from: revoke it with your administrator and get a new one. Nothing was linked.
token-several = That message held more than one API token. I deleted it and linked nothing: send me just one token.
deletion-failed = { $count ->
    [1] I could not delete the message I am replying to, which holds card details or a code. Please delete it yourself.
   *[other] I could not delete { $count } messages with card details or codes (the first is the one I am replying to). Please delete them yourself.
}
unlink-done = Unlinked. Send an API token to link again.
unlink-none = This chat is not linked.
not-linked = This chat is not linked yet. Send me your API token (or /link TOKEN) first.
group-refusal = I only work in a private chat with you.
help =
    /menu — main menu
    /cards — your cards
    /topup [amount] — top up a card
    /freeze — freeze a card
    /details — a card's details{ $addcard ->
        [yes] {"\u000A"}/addcard ID — add a card of yours the bot does not list yet, by its id at the card service
       *[no] {""}
    }{ $funding ->
        [yes] {"\u000A"}/deposit — ask for money in your wallet
       *[no] {""}
    }
    /cancel — leave the current step
    /unlink — forget this chat's token
    Buttons under each card top it up, withdraw, freeze, show details ({ $details ->
        [webapp] in a window of their own that never puts them in the chat
       *[message] in a message deleted after { $ttl } s
    }), list OTPs and close it.
cmd-start = Start and link your token
cmd-menu = Main menu
cmd-cards = Your cards
cmd-topup = Top up a card
cmd-freeze = Freeze a card
cmd-details = A card's details
cmd-addcard = Add a card by its id
cmd-deposit = Ask for money in your wallet
cmd-cancel = Leave the current step
cmd-help = Help
cmd-unlink = Forget this chat's token
menu-title = Main menu
menu-wallet = 💰 Wallet
menu-cards = 💳 My cards
menu-new-card = ➕ New card
menu-transactions = 📜 Transactions
menu-otps = 🔑 OTPs
menu-topup = ⬆️ Top up a card
menu-help = ❓ Help
wallet-balance = Wallet balance: { $balance }
wallet-held = Held for cards being issued: { $held } (already out of the balance; given back if a card is not issued)
card-processing-note = The card is being issued: its creation fee of { $fee } is held until it is ready.
card-processing-note-no-fee = The card is being issued: it is ready in a moment.
cards-none = You have no cards yet. Tap “New card” to create one.
cards-title = Your cards:
card-line = { $name } · { $masked } · { $balance } · { $status }
card-view =
    💳 { $name }
    Number: { $masked }
    Balance: { $balance }
    Status: { $status }
    Plan: { $plan } (limit { $limit }, deposited { $deposit })
btn-topup = ➕ Top up
btn-withdraw = ➖ Withdraw
btn-freeze = 🧊 Freeze
btn-unfreeze = 🔥 Unfreeze
btn-details = 👁 Details
btn-otps = 🔑 OTPs
btn-transactions = 📜 Transactions
btn-close = ✖️ Close card
btn-back = ⬅️ Back
btn-confirm = ✅ Confirm
btn-cancel = Cancel
btn-prev = ◀️ Previous
btn-next = Next ▶️
btn-request-otp = 📧 Request from e-mail
btn-watch = ⏳ Waiting for a code
btn-open-card = 💳 Open the card
addcard-usage = Send /addcard followed by the card's id, as the card service shows it.
watch-started = Watching this card for { $minutes } minutes: a code that arrives reaches you within seconds.
btn-all-cards = All cards
btn-back-card = ⬅️ Back to card
btn-menu = ☰ Menu
btn-skip = Skip
card-frozen = Card frozen.
card-unfrozen = Card unfrozen.
card-stale = { $status ->
    [closed] This card is closed.
    [frozen] This card is already frozen.
    [active] This card is already active.
   *[processing] This card is still being issued.
} Its view now shows it as it is.
card-category = { $kind ->
    [wallet] Wallet
   *[online] Online
}
merchant-service = { $original }
details-title = Card details (deleted in { $ttl } s):
details-number = Number:
details-cvv = CVV:
details-expiry = Expiry:
cancelled = Cancelled.
nothing-to-cancel = Nothing to cancel.
button-expired = This button has expired. Open the menu again: /menu
confirm-used = This confirmation was already used.
btn-amount = { $amount }
btn-amount-other = ✏️ Other amount
btn-amount-all = All ({ $amount })
amount-type = Type the amount, like 25 or 25.50, or /cancel.
topup-max-now = The most you can top up now is { $max }. Pick or type another amount, or /cancel.
topup-limit-unknown = This card's limit is not known here (it was not created in this chat): an amount above it is refused by the card service, which counts the attempt, and the next top-up then waits.
topup-nothing-now = Nothing can be topped up now: the smallest top-up is { $min }.
withdraw-max-now = The most you can withdraw now is { $max }. Send another amount, or /cancel.
withdraw-nothing = “{ $name }” has nothing to withdraw: its balance is { $balance }, the smallest withdrawal { $min }.
pick-card = Pick a card:
amount-invalid = { $message }. Send an amount like 25 or 25.50, or /cancel.
topup-ask = How much to top up “{ $name }”? From { $min } to { $max }. /cancel to stop.
topup-quote =
    Top-up { $amount }
    Platform fee ({ $category }): { $fee }
    Total charged to the wallet: { $total }
    Wallet after: { $walletAfter }
topup-confirm-unquoted = Top up “{ $name }” with { $amount }? The service tells its fee only once it is done.
topup-done = Topped up { $amount } (fee { $fee }, total charged { $total }). Card balance: { $cardBalance }. Wallet: { $wallet }.
funding-unavailable = Adding money to the wallet is not offered here: your card service does it.
withdraw-ask = How much to withdraw from “{ $name }” (balance { $balance })? From { $min } to { $max }. /cancel to stop.
withdraw-confirm = Withdraw { $amount } from “{ $name }” to your wallet?
withdraw-done = Withdrew { $amount }. Card balance: { $cardBalance }. Wallet: { $wallet }.
close-warning = Close “{ $name }”? This cannot be undone. The balance of { $balance } returns to your wallet.
close-cooldown = You can close this card { $wait ->
    [full] within { $minutes } { $minutes ->
        [one] minute
       *[other] minutes
    }
   *[other] in { $wait }
}: a card can be closed { $minutes } { $minutes ->
    [one] minute
   *[other] minutes
} after its last withdrawal. Nothing was done.
close-done = Card closed. { $amount } returned; wallet: { $wallet }.
create-pick-bin = Pick a BIN for the new card:
bin-label = { $bin } · { $network } · { $category }
create-pick-plan = Pick a plan:
plan-label = { $name } · limit { $limit } · fee { $fee }
create-ask-name = Name the card (up to 255 characters):
create-ask-coupon = Send a coupon code, or tap Skip.
create-summary =
    New card “{ $name }”
    BIN { $bin } ({ $category }), plan { $plan }: limit { $limit }
    Creation fee: { $fee }{ $coupon }
    Wallet now: { $wallet }, after the fee: { $walletAfter }
create-type = Type: { $type ->
    [single_use] single-use, closed after its first purchase
    [merchant_locked] locked to the first shop it pays
   *[multi_use] multi-use
}
btn-card-type = { $type ->
    [single_use] Single-use
    [merchant_locked] One shop
   *[multi_use] Multi-use
}
create-coupon-note = {" "}(coupon { $coupon }; without it { $planFee })
name-invalid = { $message }. Send another name, or /cancel.
coupon-invalid = { $message }. Send another code, or tap Skip.
create-done = Card “{ $name }” created: { $masked }.
otps-none = No OTPs for this card yet.
otps-title = OTPs for “{ $name }”:
otp-line = { $code }{ $payment ->
    [merchant] {" "}· { $amount } · { $merchant }
    [amount] {" "}· { $amount }
   *[none] {""}
} · { $at }
otp-requested = 🔑 OTP for “{ $name }”: { $code }
otp-request-unavailable = Your card service does not offer asking for a code by e-mail. Codes still reach this chat as they arrive; tap “Waiting for a code” to have them sooner.
otps-pick-card = Pick a card for its OTPs:
otp-push-many-title = 🔑 { $count } new OTPs, newest last:
otp-push-many-line = { $code } for “{ $name }” ({ $masked }){ $payment ->
    [merchant] : { $amount } at { $merchant }
    [amount] : a payment of { $amount }
   *[none] {""}
}
otp-push-many-earlier = { $count ->
    [one] 1 earlier code not shown
   *[other] { $count } earlier codes not shown
} (too many at once); the card's OTP list has the recent ones.
otp-push-many-ttl = Deleted in { $ttl } s.
otp-push = 🔑 OTP { $code } for “{ $name }” ({ $masked }){ $payment ->
    [merchant] : { $amount } at { $merchant }
    [amount] : a payment of { $amount }
   *[none] {""}
}. Deleted in { $ttl } s.
tx-push-approved = 💸 { $side } { $amount } at { $merchant } on “{ $name }” ({ $masked }). Balance { $balance }.
tx-push-declined = ⛔ Declined { $amount } at { $merchant } on “{ $name }” ({ $masked }): { $reason }.
tx-push-pending = ⏳ Held { $amount } at { $merchant } on “{ $name }” ({ $masked }) until the merchant settles. Balance { $balance }.
tx-push-reversed = ↩️ Released { $amount } held for { $merchant } on “{ $name }” ({ $masked }): the merchant did not take it. Balance { $balance }.
challenge-push = 🔐 Approve { $amount } at { $merchant }?
    Card “{ $name }” ({ $masked }). Answer within { $minutes } min.
challenge-outcome = { $status ->
    [approved] ✅ Approved
    [declined] ❌ Declined
   *[expired] ⌛ Expired: not answered in time
}
btn-challenge-approve = ✅ Approve
btn-challenge-decline = ❌ Decline
challenge-answered-already = Already answered.
challenge-too-late = Too late: this approval has expired.
tx-none = No transactions.
tx-title = Transactions, page { $page } of { $pages }:
tx-line = { $at } · { $name } · { $side } { $amount } · { $status }{ $reason } · { $merchant }
unknown-message = I did not get that. Open the menu with /menu, or see /help.
rate-limited = Too many messages; slow down a little.
unexpected-error = Sorry, something went wrong. Please try again later.
hint-none = {""}
hint-later = Nothing was done; try again in a few minutes.
outcome-now = Now at the card service: “{ $name }” holds { $cardBalance }; wallet { $wallet }.
hint-outcome = Do not repeat it yet: open the card in a minute to see its balance and transactions as the service shows them.
hint-token = Send a valid API token to link this chat again.
hint-wallet = Nothing was done. Ask your administrator to fund the wallet, or press Top up again for a smaller amount.
hint-wallet-fee = Nothing was done. Ask your administrator to fund the wallet, or pick a plan with a lower fee.
hint-limit = Nothing was done, and this top-up has ended: press Top up again for a smaller amount.
hint-cooldown = Try again after that.
hint-card-balance = Nothing was done, and this withdrawal has ended: press Withdraw again for a smaller amount.
hint-not-ready = The card is still being issued; try again in a moment.
hint-catalogue = Pick another one from the list.
hint-higher-plan = Pick a plan with a higher limit.
hint-coupon = Check the code, or skip the coupon.
hint-card = Open your cards with /cards.
hint-state = The card view shows what you can do now.
hint-provider = Try again later.
hint-validation = Check the value and send it again.
refusal-validation = { $count ->
    [0] Invalid input data
   *[other] Invalid input data: { $details }
}
refusal-invalid-token = Invalid or missing API token
refusal-insufficient-balance = Insufficient balance. Required: { $required }
refusal-insufficient-wallet-balance = Insufficient wallet balance. Required: { $total } (topup: { $amount } + platform fee: { $fee }), Available: { $available }
refusal-card-limit-exceeded = Topup would exceed card limit. Current deposit: { $deposit }, Limit: { $limit }, Available: { $available }
refusal-topup-cooldown = Please wait { $wait } before topping up this card again
refusal-insufficient-card-balance = Insufficient card balance. Available: { $available }, Requested: { $requested }
refusal-withdraw-cooldown = Please wait { $minutes } { $minutes ->
    [one] minute
   *[other] minutes
} between withdrawals (the next one in { $wait })
refusal-card-not-ready-withdraw = Card is not ready for withdrawals
refusal-invalid-bin = Invalid BIN ID or BIN is disabled
refusal-invalid-plan = Invalid plan ID or plan is inactive
refusal-initial-balance-over-limit = Initial balance of this BIN exceeds the plan limit. Initial balance: { $initialBalance }, Limit: { $limit }
refusal-invalid-coupon = Invalid coupon: { $reason ->
    [not-found] coupon not found
    [inactive] coupon is inactive
    [expired] coupon has expired
    [used-up] coupon has no redemptions left
   *[other] { $detail }
}
refusal-card-not-found = Card not found or access denied
refusal-card-id-required = Card ID is required
refusal-invalid-card-id-param = Invalid card_id parameter
refusal-card-closed = Card is closed
refusal-already-frozen = Card is already frozen
refusal-only-active-can-freeze = Only active cards can be frozen
refusal-card-not-ready-freeze = Card is not ready for freeze operation
refusal-only-frozen-can-unfreeze = Only frozen cards can be unfrozen
refusal-card-not-ready-unfreeze = Card is not ready for unfreeze operation
refusal-already-closed = Card is already closed
refusal-card-not-ready-close = Card not ready for closure
refusal-card-processing = Card is still being issued
refusal-service-refused = The card service refused: { $text }
refusal-service-unavailable = The card service is not answering
refusal-outcome-unknown = The card service did not answer in time, so whether it was done is not known yet
refusal-provider-failed = Failed to { $action ->
    [issue] issue
    [freeze] freeze
    [unfreeze] unfreeze
    [withdraw] withdraw from
   *[close] close
} card: { $reason }
refusal-wallet-not-found = Wallet not found
refusal-no-otp = No OTP found for this card
duration = { $minutes ->
    [0] { $seconds } s
   *[other] { $seconds ->
        [0] { $minutes } min
       *[other] { $minutes } min { $seconds } s
    }
}
issue-amount-min = Minimum amount is { $min }
issue-amount-max = Maximum amount is { $max }
issue-amount-decimals = Amount must have at most 2 decimal places
issue-amount-type = Amount must be a number
issue-name-empty = Card name is required
issue-name-long = Card name must be at most { $max } characters
issue-coupon-empty = Coupon code must not be empty
issue-coupon-long = Coupon code must be at most { $max } characters
issue-other = Invalid value of { $field }

card-status = { $status ->
    [processing] being issued
    [active] active
    [frozen] frozen
   *[closed] closed
}
tx-side = { $side ->
    [Debit] Debit
   *[Credit] Credit
}
tx-status = { $status ->
    [Reversed] Reversed
    [Pending] Pending
    [Approved] Approved
   *[Declined] Declined
}
decline-reason = { $code ->
    [card_frozen] the card is frozen
    [card_closed] the card is closed
    [insufficient_funds] not enough money on the card
    [card_processing] the card is still being issued
    [single_use_used] this single-use card was already used
    [merchant_locked] the card pays only at the merchant it is locked to
    [per_purchase_limit] over the card's per-purchase limit
    [daily_limit] over the card's daily limit
    [monthly_limit] over the card's monthly limit
    [blocked_category] this kind of merchant is blocked on the card
    [challenge_declined] the purchase was not approved in chat
   *[other] { $code }
}
flow-expired = This step waited more than { $minutes } min and has expired; nothing was done. Start again from /menu.
unlinked-token_revoked = This chat was unlinked: its API token was revoked. Nothing more will arrive here. To link again, send a new API token.
unlinked-removed_by_operator = This chat was unlinked by the service's operator. Nothing more will arrive here. To link again, send an API token.

# Card details in the Mini App (WEBAPP_URL)
btn-details-open = 👁 Show details
details-open = Press the button to see the card's details in a window of their own: they never enter the chat. The button works once, for { $minutes } min.
webapp-title = Card details
webapp-checking = Checking…
webapp-countdown = Hidden in { $seconds } s
webapp-copy = Copy
webapp-copied = Copied
webapp-hidden = The details are hidden now. To see them again, press Details under the card in the chat.
webapp-unavailable = These details cannot be shown. In the chat, open the card again and press Details: each button works once, for a few minutes.

# Money in from chat: deposit requests, Telegram Payments, the admins' chat and /stats
menu-add-money = 💵 Add money
deposit-intro =
    Add money to your wallet: from { $min } to { $max }.
    Pick an amount below, or send /deposit AMOUNT with an optional note for the administrators (a transfer reference), e.g. /deposit 250 wire ref 8812.
deposit-intro-recorded =
    Add money to your wallet: from { $min } to { $max }.
    Pick an amount below, or send /deposit AMOUNT with an optional note kept with the request (a transfer reference), e.g. /deposit 250 wire ref 8812. A request is recorded, and the service's operator approves or rejects it from their command line.
deposit-amount-invalid = { $message }. Send /deposit with an amount like 25 or 25.50.
deposit-offer =
    Add { $amount } to your wallet?
    Note for the administrators: { $note }
deposit-offer-recorded =
    Add { $amount } to your wallet?
    Note kept with the request: { $note }
btn-deposit-request = 🏦 Ask an administrator to credit it
btn-deposit-record = 🏦 Record a request for the operator
btn-deposit-pay = 💳 Pay now by card
deposit-requested = Request #{ $id } for { $amount } sent to the administrators. I will tell you here once it is decided.
deposit-requested-recorded = Request #{ $id } for { $amount } is recorded; the service's operator decides such requests from their command line. I will tell you here once it is decided.
deposit-approved = ✅ Your deposit request #{ $id } for { $amount } was approved. Wallet balance: { $balance }.
deposit-rejected = ❌ Your deposit request #{ $id } for { $amount } was rejected: { $reason }. Nothing was credited.
deposit-refusal-not-found = There is no deposit request #{ $id }.
deposit-refusal-already-decided = Deposit request #{ $id } was already { $status ->
    [approved] approved
   *[rejected] rejected
}.
deposit-refusal-note-too-long = The note is too long: at most { $max } characters.
deposit-refusal-reason-required = A rejection needs a reason.
deposit-refusal-reason-too-long = The reason is too long: at most { $max } characters. Reply again with a shorter one.
deposit-refusal-too-many-pending = You already have { $max } deposit requests waiting. Wait until they are decided.
deposit-refusal-user-not-found = Your account was not found. Ask your administrator.
invoice-title = Wallet top-up
invoice-description = { $amount } into your card wallet.
invoice-label = Wallet top-up
checkout-refused = { $reason ->
    [not-linked] This chat is not linked to your account any more. Link it again, then ask for a new invoice.
    [not-yours] This invoice belongs to another account.
    [paid] This invoice is paid already.
    [amount] The amount does not match the invoice. Ask for a new invoice.
    [currency] The currency does not match the invoice. Ask for a new invoice.
   *[unknown] This invoice is not known. Ask for a new one with /deposit.
}
payment-thanks = Thank you! { $amount } was added to your wallet.
payment-not-credited = Your payment arrived, but I could not add it to your wallet by myself. The administrators have been told and will sort it out.
payment-paid-twice = This invoice was paid already, and its { $amount } is in your wallet: this second payment added nothing. The administrators have been told, to refund it.
admin-not-allowed = Only the service's administrators can do this.
deposit-card =
    💵 Deposit request #{ $id }
    From: { $name } (user { $userId })
    Amount: { $amount }
    Note: { $note }
    Asked: { $at }
deposit-card-approved = ✅ Approved by { $admin }: { $amount } credited to the wallet.
deposit-card-rejected = ❌ Rejected by { $admin }: { $reason }
btn-deposit-approve = ✅ Approve
btn-deposit-reject = ❌ Reject
btn-deposit-other-reason = ✍️ Another reason…
deposit-reason-nr = Payment not received
deposit-reason-am = Amount does not match the payment
deposit-reason-du = Duplicate request
deposit-reason-ask = Reply to this message with the reason for rejecting request #{ $id }: the cardholder will read it.
deposit-reason-placeholder = Reason for the cardholder
deposit-approved-short = Request #{ $id } approved.
deposit-rejected-short = Request #{ $id } rejected.
stats-remote =
    📊 The bot on { $day } (UTC), in front of the card service
    Linked chats: { $chats } ({ $users } users)
    Cards the bot knows: { $knownCards } ({ $watchedCards } watched for a code now)
    Pushes sent today: { $pushesToday }; messages waiting to be deleted: { $deletionsPending }
stats-text =
    📊 The service on { $day } (UTC)
    Users: { $users }
    Cards: { $active } active, { $frozen } frozen, { $closed } closed
    In wallets: { $wallets }; on cards: { $cards }
    Fees earned today: { $fees }
    Deposit requests waiting: { $pending } ({ $pendingAmount })

# Spending controls, auto top-up, decline fixes (issue 33, sections 2 to 4)
btn-limits = 🎚 Limits
btn-auto-topup = 🔁 Auto top-up
controls-unavailable = This card service has no limits or auto top-up.
limits-title =
    🎚 Limits of “{ $name }” ({ $masked })
    Per purchase: { $perPurchase }
    Daily: { $daily } (spent today { $spentToday })
    Monthly: { $monthly } (spent this month { $spentMonth })
    Blocked: { $blocked }
    Tap a limit to change it; tap a category to block (🚫) or allow (✅) it.
limits-blocked-none = nothing
limit-none = no limit
limit-name = { $control ->
    [per_purchase_limit] Per purchase
    [daily_limit] Daily
   *[monthly_limit] Monthly
}
btn-limit = { $name }: { $value }
btn-limit-off = Off
limit-pick = { $name } limit of “{ $card }”, now { $value }. Pick the new one:
limit-set = { $name } limit: { $value }
category-name = { $category ->
    [gambling] Gambling
    [crypto] Crypto
    [adult] Adult
    [cash_and_atm] Cash and ATM
    [money_transfer] Money transfer
    [travel] Travel
    [digital_goods] Digital goods
   *[subscriptions] Subscriptions
}
btn-category-allowed = ✅ { $name }
btn-category-blocked = 🚫 { $name }
category-blocked = { $name }: blocked
category-allowed = { $name }: allowed
auto-topup-title =
    🔁 Auto top-up of “{ $name }” ({ $masked }): { $state }
    When the balance falls below { $min }, { $amount } is moved onto the card from your wallet (the usual platform fee applies); also during a purchase that would otherwise be declined for money.
auto-topup-state = { $enabled ->
    [yes] on
   *[no] off
}
btn-auto-topup-on = ▶️ Turn on
btn-auto-topup-off = ⏸ Turn off
btn-auto-topup-min = Below { $amount }
btn-auto-topup-amount = Add { $amount }
auto-topup-pick-min = Top up “{ $name }” when its balance falls below (now { $value }):
auto-topup-pick-amount = Add how much to “{ $name }” each time (now { $value })?
auto-topup-saved = Auto top-up saved.
auto-topup-done = 🔁 Auto top-up: { $amount } added to “{ $name }” ({ $masked }), balance { $balance }.
auto-topup-failed = { $reason ->
    [wallet_short] ⚠️ Auto top-up of { $amount } to “{ $name }” ({ $masked }) could not run: your wallet has { $wallet }, not enough for it and its fee. Add money to your wallet with /deposit; it runs again when next needed.
    [plan_limit] ⚠️ Auto top-up of { $amount } to “{ $name }” ({ $masked }) could not run: the card is at its plan's limit. Withdraw from it or move to a card on a bigger plan.
   *[other] ⚠️ Auto top-up of { $amount } to “{ $name }” ({ $masked }) did not run: it ran a moment ago. It runs again in a while.
}
decline-fix-topup = Top up at least { $amount } and try again.
decline-fix-unfreeze = Unfreeze the card and try again.
decline-fix-raise = It is over the { $name } limit: raise it to { $amount } and try again.
decline-fix-allow = { $category } is blocked on this card: allow it and try again.
decline-fix-new-card = A single-use card pays once: make a new card like it.
decline-fix-locked = This card is locked to { $merchant } and pays nowhere else.
btn-fix-topup = ➕ Top up { $amount }
btn-fix-unfreeze = 🔥 Unfreeze
btn-fix-raise = ⬆️ Raise the limit to { $amount }
btn-fix-allow = ✅ Allow { $category }
btn-fix-new-card = 🆕 New card like this
fix-unfreeze-confirm = Unfreeze “{ $name }” ({ $masked })? Purchases are approved on it again.
fix-raise-confirm = Raise the { $name } limit of “{ $card }” from { $from } to { $to }?
fix-allow-confirm = Allow { $category } on “{ $card }”? Purchases there are approved again.
fix-done-unfreeze = ✅ “{ $name }” unfrozen. Try the purchase again.
fix-done-raise = ✅ { $name } limit of “{ $card }”: { $to }. Try the purchase again.
fix-done-allow = ✅ { $category } allowed on “{ $card }”. Try the purchase again.
fix-stale-card = “{ $name }” is { $status } now: nothing was changed.
fix-stale-unfrozen = “{ $name }” is not frozen any more: nothing to do.
fix-stale-raised = The { $name } limit of “{ $card }” is already { $value }: nothing was changed.
fix-stale-allowed = { $category } is already allowed on “{ $card }”: nothing was changed.
create-like = A new card like “{ $name }”: BIN { $bin }, plan { $plan }, single-use.
