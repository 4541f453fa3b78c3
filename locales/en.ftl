start-welcome =
    Hi! I run your prepaid virtual cards: create, fund, freeze and close them, see balances, transactions and OTP codes.
    To begin, send me your API token (or /link TOKEN). I delete that message at once.
start-linked = You are linked. Here is your menu.
link-checking = Checking the token…
link-ok = Linked. Here is your menu.
link-refused = { $message }. Check the token with your administrator and send it again.
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
    /cancel — leave the current step
    /unlink — forget this chat's token
    Buttons under each card top it up, withdraw, freeze, show details (deleted after { $ttl } s), list OTPs and close it.
cmd-start = Start and link your token
cmd-menu = Main menu
cmd-cards = Your cards
cmd-cancel = Leave the current step
cmd-help = Help
cmd-unlink = Forget this chat's token
menu-title = Main menu
menu-wallet = 💰 Wallet
menu-cards = 💳 My cards
menu-new-card = ➕ New card
menu-transactions = 📜 Transactions
menu-otps = 🔑 OTPs
menu-help = ❓ Help
wallet-balance = Wallet balance: { $balance } USD
cards-none = You have no cards yet. Tap “New card” to create one.
cards-title = Your cards:
card-line = { $name } · { $masked } · { $balance } USD · { $status }
card-view =
    💳 { $name }
    Number: { $masked }
    Balance: { $balance } USD
    Status: { $status }
    Plan: { $plan } (limit { $limit } USD, deposited { $deposit } USD)
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
btn-all-cards = All cards
btn-skip = Skip
card-frozen = Card frozen.
card-unfrozen = Card unfrozen.
details-title = Card details (deleted in { $ttl } s):
details-number = Number:
details-cvv = CVV:
details-expiry = Expiry:
cancelled = Cancelled.
nothing-to-cancel = Nothing to cancel.
button-expired = This button has expired. Open the menu again: /menu
confirm-used = This confirmation was already used.
amount-invalid = { $message }. Send an amount like 25 or 25.50, or /cancel.
topup-ask = How much to top up “{ $name }”? From { $min } to { $max } USD. /cancel to stop.
topup-quote =
    Top-up { $amount } USD
    Platform fee ({ $category }): { $fee } USD
    Total charged to the wallet: { $total } USD
    Wallet after: { $walletAfter } USD
topup-done = Topped up { $amount } USD (fee { $fee } USD). Card balance: { $cardBalance } USD. Wallet: { $wallet } USD.
withdraw-ask = How much to withdraw from “{ $name }” (balance { $balance } USD)? From { $min } to { $max } USD. /cancel to stop.
withdraw-confirm = Withdraw { $amount } USD from “{ $name }” to your wallet?
withdraw-done = Withdrew { $amount } USD. Card balance: { $cardBalance } USD. Wallet: { $wallet } USD.
close-warning = Close “{ $name }”? This cannot be undone. The balance of { $balance } USD returns to your wallet.
close-done = Card closed. { $amount } USD returned; wallet: { $wallet } USD.
create-pick-bin = Pick a BIN for the new card:
bin-label = { $bin } · { $network } · { $category }
create-pick-plan = Pick a plan:
plan-label = { $name } · limit { $limit } · fee { $fee }
create-ask-name = Name the card (up to 255 characters):
create-ask-coupon = Send a coupon code, or tap Skip.
create-summary =
    New card “{ $name }”
    BIN { $bin } ({ $category }), plan { $plan }: limit { $limit } USD
    Creation fee: { $fee } USD{ $coupon }
    Wallet now: { $wallet } USD, after the fee: { $walletAfter } USD
create-coupon-note = {" "}(coupon { $coupon }; without it { $planFee } USD)
name-invalid = { $message }. Send another name, or /cancel.
coupon-invalid = { $message }. Send another code, or tap Skip.
create-done = Card “{ $name }” created: { $masked }.
otps-none = No OTPs for this card yet.
otps-title = OTPs for “{ $name }”:
otp-line = { $code } · { $amount } { $currency } · { $merchant } · { $at }
otp-requested = { $message }: { $code }
otps-pick-card = Pick a card for its OTPs:
otp-push = 🔑 OTP { $code } for “{ $name }” ({ $masked }): { $amount } { $currency } at { $merchant }. Deleted in { $ttl } s.
tx-push-approved = 💸 { $side } { $amount } { $currency } at { $merchant } on “{ $name }” ({ $masked }). Balance { $balance } USD.
tx-push-declined = ⛔ Declined { $amount } { $currency } at { $merchant } on “{ $name }” ({ $masked }): { $reason }.
tx-none = No transactions.
tx-title = Transactions, page { $page } of { $pages }:
tx-line = { $at } · { $name } · { $side } { $amount } { $currency } · { $status }{ $reason } · { $merchant }
unknown-message = I did not get that. Open the menu with /menu, or see /help.
rate-limited = Too many messages; slow down a little.
unexpected-error = Sorry, something went wrong. Please try again later.
hint-none = {""}
hint-token = Send a valid API token to link this chat again.
hint-wallet = Ask your administrator to fund the wallet, or try a smaller amount.
hint-limit = Try a smaller amount.
hint-cooldown = Try again after that.
hint-card-balance = Try a smaller amount.
hint-not-ready = The card is still being issued; try again in a moment.
hint-catalogue = Pick another one from the list.
hint-coupon = Check the code, or skip the coupon.
hint-card = Open your cards with /cards.
hint-state = The card view shows what you can do now.
hint-provider = Try again later.
hint-validation = Check the value and send it again.

card-status = { $status ->
    [active] active
    [frozen] frozen
   *[closed] closed
}
tx-side = { $side ->
    [Debit] Debit
   *[Credit] Credit
}
tx-status = { $status ->
    [Approved] Approved
   *[Declined] Declined
}
decline-reason = { $code ->
    [card_frozen] the card is frozen
    [card_closed] the card is closed
    [insufficient_funds] not enough money on the card
   *[other] { $code }
}
flow-expired = This step waited more than { $minutes } min and has expired; nothing was done. Start again from /menu.
unlinked-token_revoked = This chat was unlinked: its API token was revoked. Nothing more will arrive here. To link again, send a new API token.
unlinked-removed_by_operator = This chat was unlinked by the service's operator. Nothing more will arrive here. To link again, send an API token.
