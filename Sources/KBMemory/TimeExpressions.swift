public import Foundation
import KBCore

/// A time that words of a turn name, resolved against when the turn was said: a day
/// ("yesterday", "next Thursday", "in two weeks"), a span ("last week", "in March"), the end of a
/// stretch ("through Sunday", "до неділі") or its start ("since March"). `start` is the first
/// instant, `end` the instant after the last (days and spans have both; `until` has only `end`,
/// `since` only `start`).
public struct TimeReference: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case day, span, until, since
    }
    /// The words as the turn said them (lower-cased).
    public var words: String
    public var kind: Kind
    public var start: Date?
    public var end: Date?

    public init(words: String, kind: Kind, start: Date?, end: Date?) {
        self.words = words
        self.kind = kind
        self.start = start
        self.end = end
    }
}

/// Finds relative and named dates in English, Ukrainian, Russian and Arabic and resolves them
/// against the time a turn was said — no language model. Weeks start on Monday; "next Thursday"
/// is the first Thursday after today, "last Thursday" the last one before it; "in March" is March
/// of the turn's year; "through Sunday" ends with the first Sunday from today on; "until the end
/// of the month" with this month. Arabic is read without its short-vowel marks and with its
/// alif and ya forms folded (`غداً`, `الأسبوع`), and a word may carry و، ف or ب (`وغدا`). Pure.
///
/// ```swift
/// let said = ISO8601DateFormatter().date(from: "2026-11-26T10:00:00Z")!   // a Thursday
/// TimeExpressions.find(in: "I'm in Lisbon through Sunday", at: said).first?.kind   // .until (end of 29 November)
/// TimeExpressions.find(in: "موعدي الخميس القادم", at: said).first?.start        // 3 December
/// ```
public enum TimeExpressions {
    /// Every time reference in `text`, in the order they appear; overlapping phrasings count once
    /// (the longest).
    public static func find(in text: String, at now: Date, calendar: Calendar = utc) -> [TimeReference] {
        var calendar = calendar
        calendar.firstWeekday = 2
        let words = tokens(text)
        let reader = Reader(words: words, keys: words.map(key), now: now, calendar: calendar)
        var found: [TimeReference] = []
        var index = 0
        while index < words.count {
            if let (reference, length) = reader.match(at: index) {
                found.append(reference)
                index += length
            } else {
                index += 1
            }
        }
        return found
    }

    /// UTC, Gregorian: what a turn's time means when no time zone is known.
    public static var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }

    // MARK: - Words

    /// The words of a text, lower-cased, with apostrophes as `'` and Arabic without its marks.
    static func tokens(_ text: String) -> [String] {
        let folded = ArabicText.strippingMarks(text).lowercased().replacingOccurrences(of: "’", with: "'").replacingOccurrences(of: "ʼ", with: "'")
        return folded.split { !($0.isLetter || $0.isNumber || $0 == "'") }.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "'")) }
            .filter { !$0.isEmpty }
    }

    /// A word as the tables below spell it (Arabic folded; others as they are).
    static func key(_ word: String) -> String {
        word.unicodeScalars.first.map { LanguageDetector.script(of: $0) == .arabic } == true ? ArabicText.folded(word) : word
    }

    enum Unit { case day, week, month, year }

    static let units: [String: Unit] = [
        "day": .day, "days": .day, "week": .week, "weeks": .week, "month": .month, "months": .month, "year": .year, "years": .year,
        // Ukrainian
        "день": .day, "дні": .day, "днів": .day, "дня": .day, "тиждень": .week, "тижні": .week, "тижнів": .week, "тижня": .week,
        "місяць": .month, "місяці": .month, "місяців": .month, "місяця": .month, "рік": .year, "роки": .year, "років": .year, "року": .year,
        // Russian (день, дня shared)
        "дней": .day, "неделя": .week, "неделю": .week, "недели": .week, "недель": .week, "неделе": .week,
        "месяц": .month, "месяца": .month, "месяцев": .month, "месяце": .month, "год": .year, "года": .year, "лет": .year, "году": .year,
    ]
    static let numbers: [String: Int] = [
        "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
        "eleven": 11, "twelve": 12, "couple": 2,
        "один": 1, "одна": 1, "одну": 1, "одне": 1, "два": 2, "дві": 2, "три": 3, "чотири": 4, "п'ять": 5, "шість": 6, "сім": 7,
        "вісім": 8, "дев'ять": 9, "десять": 10,
        "одно": 1, "две": 2, "четыре": 4, "пять": 5, "шесть": 6, "семь": 7, "восемь": 8, "девять": 9,
    ]
    /// Weekday numbers as `Calendar` counts them (Sunday 1 … Saturday 7).
    static let weekdays: [String: Int] = [
        "sunday": 1, "monday": 2, "tuesday": 3, "wednesday": 4, "thursday": 5, "friday": 6, "saturday": 7,
        "неділя": 1, "неділю": 1, "неділі": 1, "понеділок": 2, "понеділка": 2, "вівторок": 3, "вівторка": 3,
        "середа": 4, "середу": 4, "середи": 4, "четвер": 5, "четверга": 5, "п'ятниця": 6, "п'ятницю": 6, "п'ятниці": 6,
        "субота": 7, "суботу": 7, "суботи": 7,
        // Russian (среда, среду, среды, четверг… shared)
        "воскресенье": 1, "воскресенья": 1, "понедельник": 2, "понедельника": 2, "вторник": 3, "вторника": 3, "четверг": 5,
        "пятница": 6, "пятницу": 6, "пятницы": 6, "суббота": 7, "субботу": 7, "субботы": 7,
        // Arabic, folded
        "الاحد": 1, "الاثنين": 2, "الثلاثاء": 3, "الاربعاء": 4, "الخميس": 5, "الجمعة": 6, "الجمعه": 6, "السبت": 7,
    ]
    static let months: [String: Int] = [
        "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8, "september": 9,
        "october": 10, "november": 11, "december": 12,
        // Ukrainian: in (locative) and since/until (genitive).
        "січні": 1, "лютому": 2, "березні": 3, "квітні": 4, "травні": 5, "червні": 6, "липні": 7, "серпні": 8, "вересні": 9,
        "жовтні": 10, "листопаді": 11, "грудні": 12,
        "січня": 1, "лютого": 2, "березня": 3, "квітня": 4, "травня": 5, "червня": 6, "липня": 7, "серпня": 8, "вересня": 9,
        "жовтня": 10, "листопада": 11, "грудня": 12,
        // Russian: in (prepositional) and since/until (genitive).
        "январе": 1, "феврале": 2, "марте": 3, "апреле": 4, "мае": 5, "июне": 6, "июле": 7, "августе": 8, "сентябре": 9,
        "октябре": 10, "ноябре": 11, "декабре": 12,
        "января": 1, "февраля": 2, "марта": 3, "апреля": 4, "мая": 5, "июня": 6, "июля": 7, "августа": 8, "сентября": 9,
        "октября": 10, "ноября": 11, "декабря": 12,
    ]
    /// Arabic month names, folded: those of Egypt and the Gulf, and the Levant's (two words for
    /// four of them).
    static let arabicMonths: [String: Int] = [
        "يناير": 1, "فبراير": 2, "مارس": 3, "ابريل": 4, "مايو": 5, "يونيو": 6, "يونيه": 6, "يوليو": 7, "يوليه": 7, "اغسطس": 8,
        "سبتمبر": 9, "اكتوبر": 10, "نوفمبر": 11, "ديسمبر": 12,
        "شباط": 2, "اذار": 3, "نيسان": 4, "ايار": 5, "حزيران": 6, "تموز": 7, "اب": 8, "ايلول": 9,
    ]
    static let arabicTwoWordMonths: [String: [String: Int]] = [
        "كانون": ["الثاني": 1, "الاول": 12], "تشرين": ["الاول": 10, "الثاني": 11],
    ]
    static let days: [String: Int] = [
        "yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1,
        "позавчора": -2, "вчора": -1, "учора": -1, "сьогодні": 0, "завтра": 1, "післязавтра": 2,
        "позавчера": -2, "вчера": -1, "сегодня": 0, "послезавтра": 2,
        "امس": -1, "البارحه": -1, "البارحة": -1, "اليوم": 0, "الليله": 0, "الليلة": 0, "غدا": 1, "بكره": 1, "بكرة": 1,
    ]
    /// Arabic units, folded: singular (one), dual (two), plural, and with the article.
    static let arabicUnits: [String: (Unit, count: Int?)] = [
        "يوم": (.day, 1), "يومين": (.day, 2), "ايام": (.day, nil), "اسبوع": (.week, 1), "اسبوعين": (.week, 2), "اسابيع": (.week, nil),
        "شهر": (.month, 1), "شهرين": (.month, 2), "اشهر": (.month, nil), "شهور": (.month, nil),
        "سنه": (.year, 1), "سنة": (.year, 1), "عام": (.year, 1), "سنتين": (.year, 2), "عامين": (.year, 2), "سنوات": (.year, nil), "اعوام": (.year, nil),
    ]
    static let arabicNumbers: [String: Int] = [
        "واحد": 1, "ثلاث": 3, "ثلاثه": 3, "ثلاثة": 3, "اربع": 4, "اربعه": 4, "اربعة": 4, "خمس": 5, "خمسه": 5, "خمسة": 5,
        "ست": 6, "سته": 6, "ستة": 6, "سبع": 7, "سبعه": 7, "سبعة": 7, "ثماني": 8, "ثمانيه": 8, "ثمانية": 8, "تسع": 9, "تسعه": 9,
        "تسعة": 9, "عشر": 10, "عشره": 10, "عشرة": 10,
    ]

    /// The words of one text, read from a position on.
    struct Reader {
        let words: [String]
        /// `words` as the tables spell them.
        let keys: [String]
        let now: Date
        let calendar: Calendar

        var today: Date { calendar.startOfDay(for: now) }

        func said(_ index: Int, _ length: Int) -> String { words[index..<min(words.count, index + length)].joined(separator: " ") }
        func key(_ index: Int) -> String? { index < keys.count ? keys[index] : nil }

        func component(_ unit: Unit) -> Calendar.Component {
            switch unit {
            case .day: .day
            case .week: .weekOfYear
            case .month: .month
            case .year: .year
            }
        }

        func day(_ offset: Int, _ index: Int, _ length: Int) -> (TimeReference, Int) {
            on(calendar.date(byAdding: .day, value: offset, to: today)!, index, length)
        }
        func on(_ date: Date, _ index: Int, _ length: Int) -> (TimeReference, Int) {
            let start = calendar.startOfDay(for: date)
            return (TimeReference(words: said(index, length), kind: .day, start: start, end: calendar.date(byAdding: .day, value: 1, to: start)!), length)
        }
        func span(_ unit: Unit, _ offset: Int, _ index: Int, _ length: Int) -> (TimeReference, Int) {
            let interval = calendar.dateInterval(of: component(unit), for: calendar.date(byAdding: component(unit), value: offset, to: now)!)!
            return (TimeReference(words: said(index, length), kind: .span, start: interval.start, end: interval.end), length)
        }
        func moved(_ count: Int, _ unit: Unit, _ index: Int, _ length: Int) -> (TimeReference, Int) {
            on(calendar.date(byAdding: component(unit), value: count, to: now)!, index, length)
        }
        func until(_ end: Date, _ index: Int, _ length: Int) -> (TimeReference, Int) {
            (TimeReference(words: said(index, length), kind: .until, start: nil, end: end), length)
        }
        /// Until the end of the day `target` falls on, from today on.
        func untilWeekday(_ target: Int, _ index: Int, _ length: Int) -> (TimeReference, Int) {
            until(calendar.date(byAdding: .day, value: 1, to: weekday(target, direction: 0))!, index, length)
        }
        /// Until the end of this week, month or year.
        func untilEnd(of unit: Unit, _ index: Int, _ length: Int) -> (TimeReference, Int) {
            until(calendar.dateInterval(of: component(unit), for: now)!.end, index, length)
        }
        /// The first `weekday` after today (`after`), the last before it (`before`), or from today on.
        func weekday(_ target: Int, direction: Int) -> Date {
            let current = calendar.component(.weekday, from: today)
            var delta = (target - current + 7) % 7
            if direction > 0 && delta == 0 { delta = 7 }
            if direction < 0 { delta = delta == 0 ? -7 : delta - 7 }
            return calendar.date(byAdding: .day, value: delta, to: today)!
        }
        func month(_ number: Int, since: Bool, _ index: Int, _ length: Int) -> (TimeReference, Int) {
            var parts = calendar.dateComponents([.year], from: now)
            parts.month = number
            parts.day = 1
            var start = calendar.date(from: parts)!
            if since, start > now { start = calendar.date(byAdding: .year, value: -1, to: start)! }
            let end = calendar.date(byAdding: .month, value: 1, to: start)!
            return (TimeReference(words: said(index, length), kind: since ? .since : .span, start: start, end: since ? nil : end), length)
        }
        func year(_ text: String?) -> Int? {
            guard let text, text.count == 4, let value = Int(text), (1900...2200).contains(value) else { return nil }
            return value
        }
        func count(_ text: String?) -> Int? { text.flatMap { numbers[$0] ?? Int($0) } }
        func unit(_ text: String?) -> Unit? { text.flatMap { units[$0] } }

        /// The reference starting at `index`, and how many words it takes.
        func match(at index: Int) -> (TimeReference, Int)? {
            english(index) ?? cyrillic(index) ?? arabic(index)
        }

        func english(_ i: Int) -> (TimeReference, Int)? {
            let w = { (offset: Int) in key(i + offset) }
            let first = words[i]
            if first == "the", w(1) == "day", w(2) == "before", w(3) == "yesterday" { return day(-2, i, 4) }
            if first == "the", w(1) == "day", w(2) == "after", w(3) == "tomorrow" { return day(2, i, 4) }
            if let offset = days[first] { return day(offset, i, 1) }
            if ["last", "this", "next"].contains(first) {
                let offset = first == "last" ? -1 : first == "next" ? 1 : 0
                if let spanUnit = unit(w(1)), spanUnit != .day { return span(spanUnit, offset, i, 2) }
                if let target = w(1).flatMap({ weekdays[$0] }) { return on(weekday(target, direction: offset == 0 ? 1 : offset), i, 2) }
            }
            if ["through", "until", "till", "til", "thru"].contains(first) {
                if let target = w(1).flatMap({ weekdays[$0] }) { return untilWeekday(target, i, 2) }
                if let offset = w(1).flatMap({ days[$0] }) { return until(calendar.date(byAdding: .day, value: offset + 1, to: today)!, i, 2) }
                if w(1) == "next", let spanUnit = unit(w(2)), spanUnit != .day { return until(span(spanUnit, 1, i, 3).0.end!, i, 3) }
                if w(1) == "the", w(2) == "end", w(3) == "of", ["the", "this"].contains(w(4)), let spanUnit = unit(w(5)), spanUnit != .day {
                    return untilEnd(of: spanUnit, i, 6)
                }
            }
            if first == "in", let n = count(w(1)), let stepUnit = unit(w(2)) { return moved(n, stepUnit, i, 3) }
            if first == "in", w(1) == "a", w(2) == "couple", w(3) == "of", let stepUnit = unit(w(4)) { return moved(2, stepUnit, i, 5) }
            if let n = count(first), let stepUnit = unit(w(1)), w(2) == "ago" { return moved(-n, stepUnit, i, 3) }
            if first == "in", let number = w(1).flatMap({ months[$0] }), TimeExpressions.englishMonth(w(1)) { return month(number, since: false, i, 2) }
            if first == "since", let number = w(1).flatMap({ months[$0] }), TimeExpressions.englishMonth(w(1)) { return month(number, since: true, i, 2) }
            if first == "in" || first == "since", let value = year(w(1)) {
                let start = calendar.date(from: DateComponents(year: value, month: 1, day: 1))!
                return (TimeReference(words: said(i, 2), kind: first == "since" ? .since : .span, start: start,
                                      end: first == "since" ? nil : calendar.date(byAdding: .year, value: 1, to: start)), 2)
            }
            return nil
        }

        static let last: Set<String> = ["минулого", "минулої", "минулий", "минулу", "минулому", "прошлый", "прошлую", "прошлой", "прошлом", "прошлого"]
        static let this: Set<String> = ["цього", "цієї", "цей", "цю", "цьому", "этот", "эту", "этой", "этом", "этого"]
        static let next: Set<String> = ["наступного", "наступної", "наступний", "наступну", "наступному",
                                        "следующий", "следующую", "следующей", "следующем", "следующего", "будущей", "будущем"]
        static let which = last.union(this).union(next)

        /// Ukrainian and Russian, which share most of their ways of naming a day.
        func cyrillic(_ i: Int) -> (TimeReference, Int)? {
            let w = { (offset: Int) in key(i + offset) }
            let first = words[i]
            var lead = 0
            if ["в", "у", "на", "во"].contains(first), let second = w(1), Self.which.contains(second) { lead = 1 }
            if let which = w(lead), Self.which.contains(which) {
                let offset = Self.last.contains(which) ? -1 : Self.next.contains(which) ? 1 : 0
                if let spanUnit = unit(w(lead + 1)), spanUnit != .day { return span(spanUnit, offset, i, lead + 2) }
                if let target = w(lead + 1).flatMap({ weekdays[$0] }) { return on(weekday(target, direction: offset == 0 ? 1 : offset), i, lead + 2) }
            }
            if first == "до" {
                if let target = w(1).flatMap({ weekdays[$0] }) { return untilWeekday(target, i, 2) }
                if ["кінця", "конца"].contains(w(1)), let spanUnit = unit(w(2)), spanUnit != .day { return untilEnd(of: spanUnit, i, 3) }
                if let offset = w(1).flatMap({ days[$0] }), offset >= 0 { return until(calendar.date(byAdding: .day, value: offset + 1, to: today)!, i, 2) }
            }
            if first == "через" {
                if let n = count(w(1)), let stepUnit = unit(w(2)) { return moved(n, stepUnit, i, 3) }
                if let stepUnit = unit(w(1)) { return moved(1, stepUnit, i, 2) }
            }
            let ago = ["тому", "назад"]
            if let n = count(first), let stepUnit = unit(w(1)), let after = w(2), ago.contains(after) { return moved(-n, stepUnit, i, 3) }
            if let stepUnit = unit(first), let after = w(1), ago.contains(after), !TimeExpressions.englishMonth(first) { return moved(-1, stepUnit, i, 2) }
            if ["в", "у", "во"].contains(first), let number = w(1).flatMap({ months[$0] }), !TimeExpressions.englishMonth(w(1)) {
                return month(number, since: false, i, 2)
            }
            if ["з", "із", "від", "с", "со"].contains(first), let number = w(1).flatMap({ months[$0] }), !TimeExpressions.englishMonth(w(1)) {
                return month(number, since: true, i, 2)
            }
            if ["з", "с", "в", "у"].contains(first), let value = year(w(1)), ["року", "году", "рік", "год"].contains(w(2) ?? "") {
                let start = calendar.date(from: DateComponents(year: value, month: 1, day: 1))!
                let since = ["з", "с"].contains(first)
                return (TimeReference(words: said(i, 3), kind: since ? .since : .span, start: start,
                                      end: since ? nil : calendar.date(byAdding: .year, value: 1, to: start)), 3)
            }
            return nil
        }

        /// An Arabic word's key without a leading و, ف or ب (and, so, in), when it is a longer word.
        func bare(_ index: Int) -> String? {
            guard let word = key(index) else { return nil }
            if let first = word.first, "وفب".contains(first), word.count > 3 { return String(word.dropFirst()) }
            return word
        }

        static let arabicNext: Set<String> = ["القادم", "القادمه", "القادمة", "المقبل", "المقبله", "المقبلة", "الجاي", "الجايه", "الجاية"]
        static let arabicLast: Set<String> = ["الماضي", "الماضيه", "الماضية", "الفائت", "الفائته", "الفائتة", "السابق", "السابقه", "السابقة"]
        static let arabicThis: Set<String> = ["هذا", "هذه", "هذي"]
        /// A unit with the article (الأسبوع, الشهر, السنة, العام).
        static let arabicSpans: [String: Unit] = ["الاسبوع": .week, "الشهر": .month, "السنه": .year, "السنة": .year, "العام": .year]

        func arabic(_ i: Int) -> (TimeReference, Int)? {
            guard let word = key(i), LanguageDetector.script(of: word.unicodeScalars.first!) == .arabic else { return nil }
            if let found = arabic(i, first: word) { return found }
            return bare(i).flatMap { $0 == word ? nil : arabic(i, first: $0) }
        }

        /// The Arabic reference at `i`, whose first word (without a prefix it may carry) is `first`.
        func arabic(_ i: Int, first: String) -> (TimeReference, Int)? {
            let w = { (offset: Int) in key(i + offset) }
            if first == "اول", w(1) == "امس" { return day(-2, i, 2) }
            if first == "بعد", w(1) == "غد" || w(1) == "بكره" || w(1) == "بكرة" { return day(2, i, 2) }
            if let offset = days[first] { return day(offset, i, 1) }
            // (in) the coming week, last month, Thursday next: a weekday or a span, then which.
            var lead = first == "في" ? 1 : 0
            if key(i + lead) == "يوم", key(i + lead + 1).flatMap({ weekdays[$0] }) != nil { lead += 1 }
            if let name = (lead == 0 ? first : key(i + lead)) {
                let which = key(i + lead + 1)
                let offset: Int? = which.map { Self.arabicNext.contains($0) ? 1 : Self.arabicLast.contains($0) ? -1 : nil } ?? nil
                if let target = weekdays[name] {
                    if let offset { return on(weekday(target, direction: offset), i, lead + 2) }
                    if lead > 0 || ["في", "يوم"].contains(first) { return on(weekday(target, direction: 1), i, lead + 1) }
                }
                if let spanUnit = Self.arabicSpans[name], let offset { return span(spanUnit, offset, i, lead + 2) }
            }
            // this week, this year
            if Self.arabicThis.contains(first), let spanUnit = w(1).flatMap({ Self.arabicSpans[$0] }) { return span(spanUnit, 0, i, 2) }
            // until Friday, until the end of the month
            if ["حتي", "لغايه", "لغاية", "الي"].contains(first) {
                var at = 1
                if w(at) == "غايه" || w(at) == "غاية" { at += 1 }
                if w(at) == "يوم" { at += 1 }
                if let target = w(at).flatMap({ weekdays[$0] }) { return untilWeekday(target, i, at + 1) }
                if let offset = w(at).flatMap({ days[$0] }), offset >= 0 { return until(calendar.date(byAdding: .day, value: offset + 1, to: today)!, i, at + 1) }
                if ["نهايه", "نهاية", "اخر"].contains(w(at) ?? ""), let spanUnit = w(at + 1).flatMap({ Self.arabicSpans[$0] }) {
                    return untilEnd(of: spanUnit, i, at + 2)
                }
            }
            // in two weeks, three days ago, a week ago
            if ["بعد", "خلال", "قبل", "منذ", "من"].contains(first) {
                let sign = ["قبل", "منذ", "من"].contains(first) ? -1 : 1
                if let (stepUnit, n) = w(1).flatMap({ arabicUnits[$0] }), let n { return moved(sign * n, stepUnit, i, 2) }
                if let n = w(1).flatMap({ arabicNumbers[$0] ?? Int($0) }), let (stepUnit, _) = w(2).flatMap({ arabicUnits[$0] }) {
                    return moved(sign * n, stepUnit, i, 3)
                }
            }
            // in March, since March (in the month of March)
            if ["في", "منذ", "من"].contains(first) {
                let at = w(1) == "شهر" ? 2 : 1
                let since = first != "في"
                if let number = w(at).flatMap({ arabicMonths[$0] }) { return month(number, since: since, i, at + 1) }
                if let second = w(at + 1), let number = w(at).flatMap({ Self.arabicTwoWord($0, second) }) { return month(number, since: since, i, at + 2) }
                if let value = year(w(at)) {
                    let start = calendar.date(from: DateComponents(year: value, month: 1, day: 1))!
                    return (TimeReference(words: said(i, at + 1), kind: since ? .since : .span, start: start,
                                          end: since ? nil : calendar.date(byAdding: .year, value: 1, to: start)), at + 1)
                }
            }
            return nil
        }

        static func arabicTwoWord(_ first: String, _ second: String) -> Int? { arabicTwoWordMonths[first]?[second] }
    }

    static func englishMonth(_ word: String?) -> Bool { word.map { $0.unicodeScalars.allSatisfy(\.isASCII) } ?? false }
}
