start-welcome =
    Привет! Я веду ваши предоплаченные виртуальные карты: выпуск, пополнение, заморозка, закрытие, балансы, операции и OTP-коды.
    Для начала пришлите ваш API-токен (или /link ТОКЕН). Сообщение с токеном я сразу удалю.
start-linked = Чат привязан. Вот меню.
link-checking = Проверяю токен…
link-ok = Чат привязан. Вот меню.
link-refused = { $message }. Проверьте токен у администратора и пришлите снова.
link-too-many = Слишком много попыток привязать этот чат. Подождите { $wait } и пришлите API-токен снова.
link-busy = Карточный сервис занят: токен не проверен. Пришлите его снова через минуту.
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
    /topup [сумма] — пополнить карту
    /freeze — заморозить карту
    /details — реквизиты карты{ $addcard ->
        [yes] {"\u000A"}/addcard ID — добавить вашу карту, которой бот ещё не показывает, по её id в карточном сервисе
       *[no] {""}
    }{ $funding ->
        [yes] {"\u000A"}/deposit — запросить деньги на кошелёк
       *[no] {""}
    }
    /cancel — выйти из текущего шага
    /unlink — забыть токен этого чата
    Кнопки под картой: пополнить, вывести, заморозить, реквизиты ({ $details ->
        [webapp] в отдельном окне, в чат они не попадают
       *[message] в сообщении, которое удалится через { $ttl } с
    }), OTP, закрыть.
cmd-start = Начать и привязать токен
cmd-menu = Главное меню
cmd-cards = Ваши карты
cmd-topup = Пополнить карту
cmd-freeze = Заморозить карту
cmd-details = Реквизиты карты
cmd-addcard = Добавить карту по id
cmd-deposit = Запросить деньги на кошелёк
cmd-cancel = Выйти из текущего шага
cmd-help = Помощь
cmd-unlink = Забыть токен
menu-title = Главное меню
menu-wallet = 💰 Кошелёк
menu-cards = 💳 Мои карты
menu-new-card = ➕ Новая карта
menu-transactions = 📜 Операции
menu-otps = 🔑 OTP
menu-topup = ⬆️ Пополнить карту
menu-help = ❓ Помощь
wallet-balance = Баланс кошелька: { $balance }
wallet-held = Удержано за выпуск карт: { $held } (уже не в балансе; вернётся, если карта не будет выпущена)
card-processing-note = Карта выпускается: плата за выпуск { $fee } удержана до её готовности.
card-processing-note-no-fee = Карта выпускается: она будет готова через минуту.
cards-none = Карт пока нет. Нажмите «Новая карта».
cards-title = Ваши карты:
card-line = { $name } · { $masked } · { $balance } · { $status }
card-view =
    💳 { $name }
    Номер: { $masked }
    Баланс: { $balance }
    Статус: { $status }
    Тариф: { $plan } (лимит { $limit }, внесено { $deposit })
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
btn-watch = ⏳ Жду код
btn-open-card = 💳 Открыть карту
addcard-usage = Отправьте /addcard и id карты, как его показывает карточный сервис.
watch-started = Слежу за этой картой { $minutes } минут: пришедший код дойдёт до вас за секунды.
btn-all-cards = Все карты
btn-back-card = ⬅️ К карте
btn-menu = ☰ Меню
btn-skip = Пропустить
card-frozen = Карта заморожена.
card-unfrozen = Карта разморожена.
card-stale = { $status ->
    [closed] Эта карта закрыта.
    [frozen] Эта карта уже заморожена.
    [active] Эта карта уже активна.
   *[processing] Эта карта ещё выпускается.
} Карточка показана такой, какая она сейчас.
card-category = { $kind ->
    [wallet] для кошельков
   *[online] онлайн
}
merchant-service = { $kind ->
    [topup] Пополнение из кошелька
    [withdrawal] Вывод в кошелёк
    [closure] Закрытие карты
    [initial] Начальный баланс
   *[wallet] Кошелёк
}
details-title = Реквизиты (удалятся через { $ttl } с):
details-number = Номер:
details-cvv = CVV:
details-expiry = Срок:
cancelled = Отменено.
nothing-to-cancel = Нечего отменять.
button-expired = Эта кнопка устарела. Откройте меню снова: /menu
confirm-used = Это подтверждение уже использовано.
btn-amount = { $amount }
btn-amount-other = ✏️ Другая сумма
btn-amount-all = Всё ({ $amount })
amount-type = Введите сумму, например 25 или 25,50, или /cancel.
topup-max-now = Сейчас можно зачислить не больше { $max }. Выберите или введите другую сумму, или /cancel.
topup-limit-unknown = Лимит этой карты здесь неизвестен (она создана не в этом чате): сумму сверх него сервис карт отклонит, посчитав попытку, и следующее пополнение придётся подождать.
topup-nothing-now = Сейчас ничего нельзя зачислить: наименьшее пополнение — { $min }.
withdraw-max-now = Сейчас можно вывести не больше { $max }. Пришлите другую сумму, или /cancel.
withdraw-nothing = С «{ $name }» нечего выводить: баланс { $balance }, наименьший вывод — { $min }.
pick-card = Выберите карту:
amount-invalid = { $message }. Пришлите сумму, например 25 или 25,50, или /cancel.
topup-ask = Сколько зачислить на «{ $name }»? От { $min } до { $max }. /cancel — отмена.
topup-quote =
    Пополнение { $amount }
    Комиссия платформы ({ $category }): { $fee }
    Всего спишется с кошелька: { $total }
    В кошельке останется: { $walletAfter }
topup-confirm-unquoted = Пополнить «{ $name }» на { $amount }? Комиссию сервис сообщит только после пополнения.
topup-done = Зачислено { $amount } (комиссия { $fee }, всего списано { $total }). Баланс карты: { $cardBalance }. Кошелёк: { $wallet }.
funding-unavailable = Пополнение кошелька здесь недоступно: это делается в вашем сервисе карт.
withdraw-ask = Сколько вывести с «{ $name }» (баланс { $balance })? От { $min } до { $max }. /cancel — отмена.
withdraw-confirm = Вывести { $amount } с «{ $name }» в кошелёк?
withdraw-done = Выведено { $amount }. Баланс карты: { $cardBalance }. Кошелёк: { $wallet }.
close-warning = Закрыть «{ $name }»? Это необратимо. Остаток { $balance } вернётся в кошелёк.
close-cooldown = Закрыть эту карту можно будет { $wait ->
    [full] в течение { $minutes } { $minutes ->
        [one] минуты
       *[other] минут
    }
   *[other] через { $wait }
}: карту можно закрыть не раньше чем через { $minutes } { $minutes ->
    [one] минуту
    [few] минуты
   *[other] минут
} после последнего вывода. Ничего не сделано.
close-done = Карта закрыта. Возвращено { $amount }; кошелёк: { $wallet }.
create-pick-bin = Выберите BIN новой карты:
bin-label = { $bin } · { $network } · { $category }
create-pick-plan = Выберите тариф:
plan-label = { $name } · лимит { $limit } · выпуск { $fee }
create-ask-name = Название карты (до 255 символов):
create-ask-coupon = Пришлите код купона или нажмите «Пропустить».
create-summary =
    Новая карта «{ $name }»
    BIN { $bin } ({ $category }), тариф { $plan }: лимит { $limit }
    Стоимость выпуска: { $fee }{ $coupon }
    В кошельке сейчас: { $wallet }, после оплаты: { $walletAfter }
create-type = Тип: { $type ->
    [single_use] одноразовая, закрывается после первой покупки
    [merchant_locked] только для первого магазина, где ей заплатят
   *[multi_use] многоразовая
}
btn-card-type = { $type ->
    [single_use] Одноразовая
    [merchant_locked] Один магазин
   *[multi_use] Многоразовая
}
create-coupon-note = {" "}(купон { $coupon }; без него { $planFee })
name-invalid = { $message }. Пришлите другое название или /cancel.
coupon-invalid = { $message }. Пришлите другой код или нажмите «Пропустить».
create-done = Карта «{ $name }» выпущена: { $masked }.
otps-none = Для этой карты OTP пока нет.
otps-title = OTP для «{ $name }»:
otp-line = { $code }{ $payment ->
    [merchant] {" "}· { $amount } · { $merchant }
    [amount] {" "}· { $amount }
   *[none] {""}
} · { $at }
otp-requested = 🔑 OTP для «{ $name }»: { $code }
otp-request-unavailable = Ваш карточный сервис не умеет запрашивать код из почты. Коды всё равно приходят в этот чат по мере поступления; нажмите «Жду код», чтобы получать их быстрее.
otps-pick-card = Выберите карту:
otp-push-many-title = 🔑 Новые OTP ({ $count }), последний внизу:
otp-push-many-line = { $code } для «{ $name }» ({ $masked }){ $payment ->
    [merchant] : { $amount }, { $merchant }
    [amount] : платёж на { $amount }
   *[none] {""}
}
otp-push-many-earlier = Более ранних кодов не показано: { $count } (слишком много сразу); последние есть в списке OTP карты.
otp-push-many-ttl = Удалится через { $ttl } с.
otp-push = 🔑 OTP { $code } для «{ $name }» ({ $masked }){ $payment ->
    [merchant] : { $amount }, { $merchant }
    [amount] : платёж на { $amount }
   *[none] {""}
}. Удалится через { $ttl } с.
tx-push-approved = 💸 { $side } { $amount }, { $merchant }, «{ $name }» ({ $masked }). Баланс { $balance }.
tx-push-declined = ⛔ Отклонено { $amount }, { $merchant }, «{ $name }» ({ $masked }): { $reason }.
tx-push-pending = ⏳ Удержано { $amount }, { $merchant }, «{ $name }» ({ $masked }): до списания продавцом. Баланс { $balance }.
tx-push-reversed = ↩️ Возвращено { $amount }, { $merchant }, «{ $name }» ({ $masked }): продавец не списал удержание. Баланс { $balance }.
challenge-push = 🔐 Подтвердить оплату { $amount } в { $merchant }?
    Карта «{ $name }» ({ $masked }). Ответьте в течение { $minutes } мин.
challenge-outcome = { $status ->
    [approved] ✅ Подтверждено
    [declined] ❌ Отклонено
   *[expired] ⌛ Истекло: ответа не было вовремя
}
btn-challenge-approve = ✅ Подтвердить
btn-challenge-decline = ❌ Отклонить
challenge-answered-already = Ответ уже дан.
challenge-too-late = Поздно: время на подтверждение истекло.
tx-none = Операций нет.
tx-title = Операции, страница { $page } из { $pages }:
tx-line = { $at } · { $name } · { $side } { $amount } · { $status }{ $reason } · { $merchant }
unknown-message = Не понял. Откройте меню: /menu, или справку: /help.
rate-limited = Слишком много сообщений, помедленнее.
unexpected-error = Извините, что-то пошло не так. Попробуйте позже.
hint-none = {""}
hint-later = Ничего не сделано; попробуйте через несколько минут.
outcome-now = Сейчас в карточном сервисе: на «{ $name }» { $cardBalance }; кошелёк { $wallet }.
hint-outcome = Не повторяйте пока: откройте карту через минуту и посмотрите её баланс и операции, как их показывает сервис.
hint-token = Пришлите действующий API-токен, чтобы привязать чат снова.
hint-wallet = Ничего не сделано. Попросите администратора пополнить кошелёк или снова нажмите «Пополнить» и выберите меньшую сумму.
hint-wallet-fee = Ничего не сделано. Попросите администратора пополнить кошелёк или выберите тариф с меньшей платой за выпуск.
hint-limit = Ничего не сделано, это пополнение завершено: чтобы зачислить меньше, снова нажмите «Пополнить».
hint-cooldown = Попробуйте после этого.
hint-card-balance = Ничего не сделано, этот вывод завершён: чтобы вывести меньше, снова нажмите «Вывести».
hint-not-ready = Карта ещё выпускается; попробуйте чуть позже.
hint-catalogue = Выберите другой вариант из списка.
hint-higher-plan = Выберите тариф с большим лимитом.
hint-coupon = Проверьте код или пропустите купон.
hint-card = Откройте карты: /cards.
hint-state = В карточке видно, что можно сделать сейчас.
hint-provider = Попробуйте позже.
hint-validation = Проверьте значение и пришлите снова.
refusal-validation = { $count ->
    [0] Неверные данные
   *[other] Неверные данные: { $details }
}
refusal-invalid-token = API-токен неверен или не указан
refusal-insufficient-balance = Недостаточно средств. Нужно: { $required }
refusal-insufficient-wallet-balance = Недостаточно средств в кошельке. Нужно: { $total } (пополнение { $amount } + комиссия платформы { $fee }), доступно: { $available }
refusal-card-limit-exceeded = Пополнение превысит лимит карты. Уже внесено: { $deposit }, лимит: { $limit }, можно внести ещё: { $available }
refusal-topup-cooldown = Подождите { $wait }, прежде чем снова пополнять эту карту
refusal-insufficient-card-balance = Недостаточно средств на карте. Доступно: { $available }, запрошено: { $requested }
refusal-withdraw-cooldown = Между выводами должно пройти не меньше { $minutes } { $minutes ->
    [one] минуты
   *[other] минут
} (следующий — через { $wait })
refusal-card-not-ready-withdraw = Карта ещё не готова к выводу средств
refusal-invalid-bin = Неверный BIN или BIN отключён
refusal-invalid-plan = Неверный тариф или тариф отключён
refusal-initial-balance-over-limit = Начальный баланс этого BIN больше лимита тарифа. Начальный баланс: { $initialBalance }, лимит: { $limit }
refusal-invalid-coupon = Купон не подходит: { $reason ->
    [not-found] такого купона нет
    [inactive] купон отключён
    [expired] срок купона истёк
    [used-up] купон исчерпан
   *[other] { $detail }
}
refusal-card-not-found = Карта не найдена или доступ запрещён
refusal-card-id-required = Не указан ID карты
refusal-invalid-card-id-param = Неверный параметр card_id
refusal-card-closed = Карта закрыта
refusal-already-frozen = Карта уже заморожена
refusal-only-active-can-freeze = Заморозить можно только активную карту
refusal-card-not-ready-freeze = Карта ещё не готова к заморозке
refusal-only-frozen-can-unfreeze = Разморозить можно только замороженную карту
refusal-card-not-ready-unfreeze = Карта ещё не готова к разморозке
refusal-already-closed = Карта уже закрыта
refusal-card-not-ready-close = Карта ещё не готова к закрытию
refusal-card-processing = Карта ещё выпускается
refusal-service-refused = Карточный сервис отказал: { $text }
refusal-service-unavailable = Карточный сервис не отвечает
refusal-outcome-unknown = Карточный сервис не ответил вовремя, поэтому пока неизвестно, выполнено ли это
refusal-provider-failed = Не удалось { $action ->
    [issue] выпустить карту
    [freeze] заморозить карту
    [unfreeze] разморозить карту
    [withdraw] вывести деньги с карты
   *[close] закрыть карту
}: { $reason }
refusal-wallet-not-found = Кошелёк не найден
refusal-no-otp = Для этой карты OTP не найден
duration = { $minutes ->
    [0] { $seconds } с
   *[other] { $seconds ->
        [0] { $minutes } мин
       *[other] { $minutes } мин { $seconds } с
    }
}
issue-amount-min = Минимальная сумма — { $min }
issue-amount-max = Максимальная сумма — { $max }
issue-amount-decimals = В сумме не больше 2 знаков после запятой
issue-amount-type = Сумма должна быть числом
issue-name-empty = Нужно название карты
issue-name-long = Название карты — не длиннее { $max } { $max ->
    [one] символа
   *[other] символов
}
issue-coupon-empty = Код купона не может быть пустым
issue-coupon-long = Код купона — не длиннее { $max } { $max ->
    [one] символа
   *[other] символов
}
issue-other = Недопустимое значение поля { $field }

card-status = { $status ->
    [processing] выпускается
    [active] активна
    [frozen] заморожена
   *[closed] закрыта
}
tx-side = { $side ->
    [Debit] Списание
   *[Credit] Зачисление
}
tx-status = { $status ->
    [Reversed] Отменена
    [Pending] В обработке
    [Approved] Проведена
   *[Declined] Отклонена
}
decline-reason = { $code ->
    [card_frozen] карта заморожена
    [card_closed] карта закрыта
    [insufficient_funds] недостаточно средств на карте
    [card_processing] карта ещё выпускается
    [single_use_used] эта одноразовая карта уже использована
    [merchant_locked] карта платит только у продавца, к которому привязана
    [per_purchase_limit] превышен лимит на одну покупку
    [daily_limit] превышен дневной лимит карты
    [monthly_limit] превышен месячный лимит карты
    [blocked_category] покупки у таких продавцов запрещены на карте
    [challenge_declined] покупка не подтверждена в чате
   *[other] { $code }
}
flow-expired = Этот шаг ждал дольше { $minutes } мин. и истёк; ничего не сделано. Начните заново из /menu.
unlinked-token_revoked = Чат отвязан: его API-токен отозван. Сюда больше ничего не придёт. Чтобы привязать снова, пришлите новый API-токен.
unlinked-removed_by_operator = Чат отвязан оператором сервиса. Сюда больше ничего не придёт. Чтобы привязать снова, пришлите API-токен.

# Реквизиты карты в мини-приложении (WEBAPP_URL)
btn-details-open = 👁 Показать реквизиты
details-open = Нажмите кнопку, чтобы увидеть реквизиты карты в отдельном окне: в чат они не попадают. Кнопка работает один раз, { $minutes } мин.
webapp-title = Реквизиты карты
webapp-checking = Проверяем…
webapp-countdown = Скроются через { $seconds } с
webapp-copy = Копировать
webapp-copied = Скопировано
webapp-hidden = Реквизиты скрыты. Чтобы увидеть их снова, нажмите «Реквизиты» под картой в чате.
webapp-unavailable = Эти реквизиты нельзя показать. В чате откройте карту снова и нажмите «Реквизиты»: каждая кнопка работает один раз, несколько минут.

# Money in from chat: deposit requests, Telegram Payments, the admins' chat and /stats
menu-add-money = 💵 Пополнить кошелёк
deposit-intro =
    Пополнение кошелька: от { $min } до { $max }.
    Выберите сумму ниже или отправьте /deposit СУММА с необязательной заметкой для администраторов (например, номер перевода): /deposit 250 перевод 8812.
deposit-intro-recorded =
    Пополнение кошелька: от { $min } до { $max }.
    Выберите сумму ниже или отправьте /deposit СУММА с необязательной заметкой к заявке (например, номер перевода): /deposit 250 перевод 8812. Заявка будет записана, а одобрит или отклонит её оператор сервиса из своей командной строки.
deposit-amount-invalid = { $message }. Отправьте /deposit с суммой, например 25 или 25,50.
deposit-offer =
    Пополнить кошелёк на { $amount }?
    Заметка для администраторов: { $note }
deposit-offer-recorded =
    Пополнить кошелёк на { $amount }?
    Заметка к заявке: { $note }
btn-deposit-request = 🏦 Попросить администратора зачислить
btn-deposit-record = 🏦 Записать заявку для оператора
btn-deposit-pay = 💳 Оплатить картой сейчас
deposit-requested = Заявка №{ $id } на { $amount } отправлена администраторам. Я сообщу здесь, когда по ней примут решение.
deposit-requested-recorded = Заявка №{ $id } на { $amount } записана; такие заявки оператор сервиса решает из своей командной строки. Я сообщу здесь, когда по ней примут решение.
deposit-approved = ✅ Ваша заявка на пополнение №{ $id } на { $amount } одобрена. Баланс кошелька: { $balance }.
deposit-rejected = ❌ Ваша заявка на пополнение №{ $id } на { $amount } отклонена: { $reason }. Ничего не зачислено.
deposit-refusal-not-found = Заявки на пополнение №{ $id } нет.
deposit-refusal-already-decided = Заявка на пополнение №{ $id } уже { $status ->
    [approved] одобрена
   *[rejected] отклонена
}.
deposit-refusal-note-too-long = Заметка слишком длинная: не больше { $max } символов.
deposit-refusal-reason-required = Для отказа нужна причина.
deposit-refusal-reason-too-long = Причина слишком длинная: не больше { $max } символов. Ответьте ещё раз, короче.
deposit-refusal-too-many-pending = У вас уже { $max } заявок на пополнение ждут решения. Дождитесь, пока их рассмотрят.
deposit-refusal-user-not-found = Ваша учётная запись не найдена. Обратитесь к администратору.
invoice-title = Пополнение кошелька
invoice-description = { $amount } в кошелёк для карт.
invoice-label = Пополнение кошелька
checkout-refused = { $reason ->
    [not-linked] Этот чат больше не привязан к вашей учётной записи. Привяжите его снова и запросите новый счёт.
    [not-yours] Этот счёт принадлежит другой учётной записи.
    [paid] Этот счёт уже оплачен.
    [amount] Сумма не совпадает со счётом. Запросите новый счёт.
    [currency] Валюта не совпадает со счётом. Запросите новый счёт.
   *[unknown] Этот счёт неизвестен. Запросите новый через /deposit.
}
payment-thanks = Спасибо! { $amount } зачислено в кошелёк.
payment-not-credited = Платёж получен, но я не смог сам зачислить его в кошелёк. Администраторы уже знают и разберутся.
payment-paid-twice = Этот счёт уже был оплачен, и его { $amount } уже в кошельке: второй платёж ничего не добавил. Администраторы уже знают и вернут его.
admin-not-allowed = Это могут делать только администраторы сервиса.
deposit-card =
    💵 Заявка на пополнение №{ $id }
    От: { $name } (пользователь { $userId })
    Сумма: { $amount }
    Заметка: { $note }
    Создана: { $at }
deposit-card-approved = ✅ Одобрил { $admin }: { $amount } зачислено в кошелёк.
deposit-card-rejected = ❌ Отклонил { $admin }: { $reason }
btn-deposit-approve = ✅ Одобрить
btn-deposit-reject = ❌ Отклонить
btn-deposit-other-reason = ✍️ Другая причина…
deposit-reason-nr = Платёж не поступил
deposit-reason-am = Сумма не совпадает с платежом
deposit-reason-du = Повторная заявка
deposit-reason-ask = Ответьте на это сообщение причиной отказа по заявке №{ $id }: её прочитает владелец карты.
deposit-reason-placeholder = Причина для владельца карты
deposit-approved-short = Заявка №{ $id } одобрена.
deposit-rejected-short = Заявка №{ $id } отклонена.
stats-remote =
    📊 Бот на { $day } (UTC), перед карточным сервисом
    Привязанных чатов: { $chats } (пользователей: { $users })
    Известных боту карт: { $knownCards } (ждут код сейчас: { $watchedCards })
    Отправлено сегодня: { $pushesToday }; сообщений ждут удаления: { $deletionsPending }
stats-text =
    📊 Сервис на { $day } (UTC)
    Пользователи: { $users }
    Карты: активных { $active }, замороженных { $frozen }, закрытых { $closed }
    В кошельках: { $wallets }; на картах: { $cards }
    Комиссии за сегодня: { $fees }
    Заявок на пополнение ждут: { $pending } ({ $pendingAmount })

# Лимиты, автопополнение, исправление отказов (задача 33, разделы 2–4)
btn-limits = 🎚 Лимиты
btn-auto-topup = 🔁 Автопополнение
controls-unavailable = У этого сервиса карт нет лимитов и автопополнения.
limits-title =
    🎚 Лимиты карты «{ $name }» ({ $masked })
    На покупку: { $perPurchase }
    В день: { $daily } (потрачено сегодня { $spentToday })
    В месяц: { $monthly } (потрачено в этом месяце { $spentMonth })
    Запрещено: { $blocked }
    Нажмите на лимит, чтобы изменить его; на категорию — чтобы запретить (🚫) или разрешить (✅) её.
limits-blocked-none = ничего
limit-none = без лимита
limit-name = { $control ->
    [per_purchase_limit] На покупку
    [daily_limit] Дневной
   *[monthly_limit] Месячный
}
btn-limit = { $name }: { $value }
btn-limit-off = Без лимита
limit-pick = Лимит «{ $name }» карты «{ $card }», сейчас { $value }. Выберите новый:
limit-set = Лимит «{ $name }»: { $value }
category-name = { $category ->
    [gambling] Азартные игры
    [crypto] Криптовалюта
    [adult] Для взрослых
    [cash_and_atm] Наличные и банкоматы
    [money_transfer] Денежные переводы
    [travel] Путешествия
    [digital_goods] Цифровые товары
   *[subscriptions] Подписки
}
btn-category-allowed = ✅ { $name }
btn-category-blocked = 🚫 { $name }
category-blocked = { $name }: запрещено
category-allowed = { $name }: разрешено
auto-topup-title =
    🔁 Автопополнение карты «{ $name }» ({ $masked }): { $state }
    Когда баланс падает ниже { $min }, на карту переводится { $amount } из кошелька (с обычной комиссией платформы); также во время покупки, которую иначе отклонили бы из-за нехватки денег.
auto-topup-state = { $enabled ->
    [yes] включено
   *[no] выключено
}
btn-auto-topup-on = ▶️ Включить
btn-auto-topup-off = ⏸ Выключить
btn-auto-topup-min = Ниже { $amount }
btn-auto-topup-amount = Добавлять { $amount }
auto-topup-pick-min = Пополнять «{ $name }», когда баланс ниже (сейчас { $value }):
auto-topup-pick-amount = Сколько добавлять на «{ $name }» каждый раз (сейчас { $value })?
auto-topup-saved = Автопополнение сохранено.
auto-topup-done = 🔁 Автопополнение: на «{ $name }» ({ $masked }) добавлено { $amount }, баланс { $balance }.
auto-topup-failed = { $reason ->
    [wallet_short] ⚠️ Автопополнение «{ $name }» ({ $masked }) на { $amount } не выполнено: в кошельке { $wallet }, этого не хватает с комиссией. Пополните кошелёк командой /deposit; автопополнение сработает, когда понадобится снова.
    [plan_limit] ⚠️ Автопополнение «{ $name }» ({ $masked }) на { $amount } не выполнено: карта достигла лимита своего тарифа. Выведите с неё часть денег или заведите карту на тарифе побольше.
   *[other] ⚠️ Автопополнение «{ $name }» ({ $masked }) на { $amount } не выполнено: оно только что сработало. Сработает снова чуть позже.
}
decline-fix-topup = Пополните карту хотя бы на { $amount } и повторите покупку.
decline-fix-unfreeze = Разморозьте карту и повторите покупку.
decline-fix-raise = Превышен лимит «{ $name }»: поднимите его до { $amount } и повторите покупку.
decline-fix-allow = Категория «{ $category }» запрещена на этой карте: разрешите её и повторите покупку.
decline-fix-new-card = Одноразовой картой платят один раз: выпустите такую же новую.
decline-fix-locked = Эта карта привязана к продавцу { $merchant } и больше нигде не платит.
btn-fix-topup = ➕ Пополнить на { $amount }
btn-fix-unfreeze = 🔥 Разморозить
btn-fix-raise = ⬆️ Поднять лимит до { $amount }
btn-fix-allow = ✅ Разрешить: { $category }
btn-fix-new-card = 🆕 Такая же новая карта
fix-unfreeze-confirm = Разморозить «{ $name }» ({ $masked })? Покупки по ней снова будут проходить.
fix-raise-confirm = Поднять лимит «{ $name }» карты «{ $card }» с { $from } до { $to }?
fix-allow-confirm = Разрешить «{ $category }» на карте «{ $card }»? Такие покупки снова будут проходить.
fix-done-unfreeze = ✅ «{ $name }» разморожена. Повторите покупку.
fix-done-raise = ✅ Лимит «{ $name }» карты «{ $card }»: { $to }. Повторите покупку.
fix-done-allow = ✅ «{ $category }» разрешено на карте «{ $card }». Повторите покупку.
fix-stale-card = Карта «{ $name }» теперь { $status }: ничего не изменено.
fix-stale-unfrozen = Карта «{ $name }» уже не заморожена: делать ничего не нужно.
fix-stale-raised = Лимит «{ $name }» карты «{ $card }» уже { $value }: ничего не изменено.
fix-stale-allowed = «{ $category }» уже разрешено на карте «{ $card }»: ничего не изменено.
create-like = Новая карта как «{ $name }»: BIN { $bin }, тариф { $plan }, одноразовая.
