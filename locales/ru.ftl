start-welcome =
    Привет! Я веду ваши предоплаченные виртуальные карты: выпуск, пополнение, заморозка, закрытие, балансы, операции и OTP-коды.
    Для начала пришлите ваш API-токен (или /link ТОКЕН). Это сообщение я сразу удалю.
start-linked = Чат привязан. Вот меню.
link-checking = Проверяю токен…
link-ok = Чат привязан. Вот меню.
link-refused = { $message }. Проверьте токен у администратора и пришлите снова.
link-revoked = Токен этого чата больше не действует ({ $message }). Пришлите новый API-токен.
token-not-deleted = Не получилось удалить это сообщение, а в нём API-токен. Пожалуйста, удалите его сами.
token-in-group = Это был API-токен. Его мог увидеть любой в этом чате: отзовите его у администратора и получите новый. Токены присылайте только мне, в личном чате.
token-forwarded = Пересланный API-токен здесь я удалил, но он остался в чате, откуда его переслали: отзовите его у администратора и получите новый. Ничего не привязано.
token-several = В сообщении было несколько API-токенов. Я удалил его и ничего не привязал: пришлите один токен.
deletion-failed = { $count ->
    [1] Не получилось удалить сообщение, на которое я отвечаю: в нём реквизиты карты или код. Пожалуйста, удалите его сами.
    [one] Не получилось удалить { $count } сообщение с реквизитами карт или кодами (первое — то, на которое я отвечаю). Пожалуйста, удалите их сами.
    [few] Не получилось удалить { $count } сообщения с реквизитами карт или кодами (первое — то, на которое я отвечаю). Пожалуйста, удалите их сами.
   *[many] Не получилось удалить { $count } сообщений с реквизитами карт или кодами (первое — то, на которое я отвечаю). Пожалуйста, удалите их сами.
}
unlink-done = Привязка удалена. Пришлите API-токен, чтобы привязать снова.
unlink-none = Этот чат не привязан.
not-linked = Чат ещё не привязан. Сначала пришлите API-токен (или /link ТОКЕН).
group-refusal = Я работаю только в личном чате.
help =
    /menu — главное меню
    /cards — ваши карты
    /cancel — выйти из текущего шага
    /unlink — забыть токен этого чата
    Кнопки под картой: пополнить, вывести, заморозить, реквизиты (удаляются через { $ttl } с), OTP, закрыть.
cmd-start = Начать и привязать токен
cmd-menu = Главное меню
cmd-cards = Ваши карты
cmd-cancel = Выйти из текущего шага
cmd-help = Помощь
cmd-unlink = Забыть токен
menu-title = Главное меню
menu-wallet = 💰 Кошелёк
menu-cards = 💳 Мои карты
menu-new-card = ➕ Новая карта
menu-transactions = 📜 Операции
menu-otps = 🔑 OTP
menu-help = ❓ Помощь
wallet-balance = Баланс кошелька: { $balance } USD
cards-none = Карт пока нет. Нажмите «Новая карта».
cards-title = Ваши карты:
card-line = { $name } · { $masked } · { $balance } USD · { $status }
card-view =
    💳 { $name }
    Номер: { $masked }
    Баланс: { $balance } USD
    Статус: { $status }
    Тариф: { $plan } (лимит { $limit } USD, внесено { $deposit } USD)
btn-topup = ➕ Пополнить
btn-withdraw = ➖ Вывести
btn-freeze = 🧊 Заморозить
btn-unfreeze = 🔥 Разморозить
btn-details = 👁 Реквизиты
btn-otps = 🔑 OTP
btn-transactions = 📜 Операции
btn-close = ✖️ Закрыть карту
btn-back = ⬅️ Назад
btn-confirm = ✅ Подтвердить
btn-cancel = Отмена
btn-prev = ◀️ Назад
btn-next = Далее ▶️
btn-request-otp = 📧 Запросить из почты
btn-all-cards = Все карты
btn-skip = Пропустить
card-frozen = Карта заморожена.
card-unfrozen = Карта разморожена.
details-title = Реквизиты (удалятся через { $ttl } с):
details-number = Номер:
details-cvv = CVV:
details-expiry = Срок:
cancelled = Отменено.
nothing-to-cancel = Нечего отменять.
button-expired = Эта кнопка устарела. Откройте меню снова: /menu
confirm-used = Это подтверждение уже использовано.
amount-invalid = { $message }. Пришлите сумму, например 25 или 25.50, или /cancel.
topup-ask = Сколько зачислить на «{ $name }»? От { $min } до { $max } USD. /cancel — отмена.
topup-quote =
    Пополнение { $amount } USD
    Комиссия платформы ({ $category }): { $fee } USD
    Всего спишется с кошелька: { $total } USD
    В кошельке останется: { $walletAfter } USD
topup-done = Зачислено { $amount } USD (комиссия { $fee } USD). Баланс карты: { $cardBalance } USD. Кошелёк: { $wallet } USD.
withdraw-ask = Сколько вывести с «{ $name }» (баланс { $balance } USD)? От { $min } до { $max } USD. /cancel — отмена.
withdraw-confirm = Вывести { $amount } USD с «{ $name }» в кошелёк?
withdraw-done = Выведено { $amount } USD. Баланс карты: { $cardBalance } USD. Кошелёк: { $wallet } USD.
close-warning = Закрыть «{ $name }»? Это необратимо. Остаток { $balance } USD вернётся в кошелёк.
close-done = Карта закрыта. Возвращено { $amount } USD; кошелёк: { $wallet } USD.
create-pick-bin = Выберите BIN новой карты:
bin-label = { $bin } · { $network } · { $category }
create-pick-plan = Выберите тариф:
plan-label = { $name } · лимит { $limit } · выпуск { $fee }
create-ask-name = Название карты (до 255 символов):
create-ask-coupon = Пришлите код купона или нажмите «Пропустить».
create-summary =
    Новая карта «{ $name }»
    BIN { $bin } ({ $category }), тариф { $plan }: лимит { $limit } USD
    Стоимость выпуска: { $fee } USD{ $coupon }
    В кошельке сейчас: { $wallet } USD, после оплаты: { $walletAfter } USD
create-coupon-note = {" "}(купон { $coupon }; без него { $planFee } USD)
name-invalid = { $message }. Пришлите другое название или /cancel.
coupon-invalid = { $message }. Пришлите другой код или нажмите «Пропустить».
create-done = Карта «{ $name }» выпущена: { $masked }.
otps-none = Для этой карты OTP пока нет.
otps-title = OTP для «{ $name }»:
otp-line = { $code } · { $amount } { $currency } · { $merchant } · { $at }
otp-requested = { $message }: { $code }
otps-pick-card = Выберите карту:
otp-push = 🔑 OTP { $code } для «{ $name }» ({ $masked }): { $amount } { $currency }, { $merchant }. Удалится через { $ttl } с.
tx-push-approved = 💸 { $side } { $amount } { $currency }, { $merchant }, «{ $name }» ({ $masked }). Баланс { $balance } USD.
tx-push-declined = ⛔ Отклонено { $amount } { $currency }, { $merchant }, «{ $name }» ({ $masked }): { $reason }.
tx-none = Операций нет.
tx-title = Операции, страница { $page } из { $pages }:
tx-line = { $at } · { $name } · { $side } { $amount } { $currency } · { $status }{ $reason } · { $merchant }
unknown-message = Не понял. Откройте меню: /menu, или справку: /help.
rate-limited = Слишком много сообщений, помедленнее.
unexpected-error = Извините, что-то пошло не так. Попробуйте позже.
hint-none = {""}
hint-token = Пришлите действующий API-токен, чтобы привязать чат снова.
hint-wallet = Попросите администратора пополнить кошелёк или введите меньшую сумму.
hint-limit = Введите меньшую сумму.
hint-cooldown = Попробуйте после этого.
hint-card-balance = Введите меньшую сумму.
hint-not-ready = Карта ещё выпускается; попробуйте чуть позже.
hint-catalogue = Выберите другой вариант из списка.
hint-coupon = Проверьте код или пропустите купон.
hint-card = Откройте карты: /cards.
hint-state = В карточке видно, что можно сделать сейчас.
hint-provider = Попробуйте позже.
hint-validation = Проверьте значение и пришлите снова.

card-status = { $status ->
    [active] активна
    [frozen] заморожена
   *[closed] закрыта
}
tx-side = { $side ->
    [Debit] Списание
   *[Credit] Зачисление
}
tx-status = { $status ->
    [Approved] Проведена
   *[Declined] Отклонена
}
decline-reason = { $code ->
    [card_frozen] карта заморожена
    [card_closed] карта закрыта
    [insufficient_funds] недостаточно средств на карте
   *[other] { $code }
}
flow-expired = Этот шаг ждал дольше { $minutes } мин. и истёк; ничего не сделано. Начните заново из /menu.
unlinked-token_revoked = Чат отвязан: его API-токен отозван. Сюда больше ничего не придёт. Чтобы привязать снова, пришлите новый API-токен.
unlinked-removed_by_operator = Чат отвязан оператором сервиса. Сюда больше ничего не придёт. Чтобы привязать снова, пришлите API-токен.
