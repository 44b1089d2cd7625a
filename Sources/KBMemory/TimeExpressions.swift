public import Foundation

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

/// Finds relative and named dates in English and Ukrainian and resolves them against the time a
/// turn was said — no language model. Weeks start on Monday; "next Thursday" is the first
/// Thursday after today, "last Thursday" the last one before it; "in March" is March of the
/// turn's year; "through Sunday" ends with the first Sunday from today on. Pure.
///
/// ```swift
/// let said = ISO8601DateFormatter().date(from: "2026-11-26T10:00:00Z")!   // a Thursday
/// TimeExpressions.find(in: "I'm in Lisbon through Sunday", at: said).first?.kind   // .until (end of 29 November)
/// ```
public enum TimeExpressions {
    /// Every time reference in `text`, in the order they appear; overlapping phrasings count once
    /// (the longest).
    public static func find(in text: String, at now: Date, calendar: Calendar = utc) -> [TimeReference] {
        var calendar = calendar
        calendar.firstWeekday = 2
        let words = tokens(text)
        var found: [TimeReference] = []
        var index = 0
        while index < words.count {
            if let (reference, length) = match(words, at: index, now: now, calendar: calendar) {
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

    static func tokens(_ text: String) -> [String] {
        let folded = text.lowercased().replacingOccurrences(of: "’", with: "'").replacingOccurrences(of: "ʼ", with: "'")
        return folded.split { !($0.isLetter || $0.isNumber || $0 == "'") }.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "'")) }
            .filter { !$0.isEmpty }
    }

    enum Unit { case day, week, month, year }

    static let englishUnits: [String: Unit] = [
        "day": .day, "days": .day, "week": .week, "weeks": .week, "month": .month, "months": .month, "year": .year, "years": .year,
    ]
    static let ukrainianUnits: [String: Unit] = [
        "день": .day, "дні": .day, "днів": .day, "дня": .day, "тиждень": .week, "тижні": .week, "тижнів": .week, "тижня": .week,
        "місяць": .month, "місяці": .month, "місяців": .month, "місяця": .month, "рік": .year, "роки": .year, "років": .year, "року": .year,
    ]
    static let numbers: [String: Int] = [
        "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
        "eleven": 11, "twelve": 12, "couple": 2,
        "один": 1, "одна": 1, "одну": 1, "одне": 1, "два": 2, "дві": 2, "три": 3, "чотири": 4, "п'ять": 5, "шість": 6, "сім": 7,
        "вісім": 8, "дев'ять": 9, "десять": 10,
    ]
    /// Weekday numbers as `Calendar` counts them (Sunday 1 … Saturday 7).
    static let weekdays: [String: Int] = [
        "sunday": 1, "monday": 2, "tuesday": 3, "wednesday": 4, "thursday": 5, "friday": 6, "saturday": 7,
        "неділя": 1, "неділю": 1, "неділі": 1, "понеділок": 2, "понеділка": 2, "вівторок": 3, "вівторка": 3,
        "середа": 4, "середу": 4, "середи": 4, "четвер": 5, "четверга": 5, "п'ятниця": 6, "п'ятницю": 6, "п'ятниці": 6,
        "субота": 7, "суботу": 7, "суботи": 7,
    ]
    static let months: [String: Int] = [
        "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8, "september": 9,
        "october": 10, "november": 11, "december": 12,
        // Ukrainian: in (locative) and since/until (genitive).
        "січні": 1, "лютому": 2, "березні": 3, "квітні": 4, "травні": 5, "червні": 6, "липні": 7, "серпні": 8, "вересні": 9,
        "жовтні": 10, "листопаді": 11, "грудні": 12,
        "січня": 1, "лютого": 2, "березня": 3, "квітня": 4, "травня": 5, "червня": 6, "липня": 7, "серпня": 8, "вересня": 9,
        "жовтня": 10, "листопада": 11, "грудня": 12,
    ]
    static let days: [String: Int] = [
        "yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1,
        "позавчора": -2, "вчора": -1, "учора": -1, "сьогодні": 0, "завтра": 1, "післязавтра": 2,
    ]

    // MARK: - Patterns

    /// The reference starting at `index`, and how many words it takes.
    static func match(_ w: [String], at i: Int, now: Date, calendar: Calendar) -> (TimeReference, Int)? {
        func word(_ offset: Int) -> String? { i + offset < w.count ? w[i + offset] : nil }
        func said(_ length: Int) -> String { w[i..<min(w.count, i + length)].joined(separator: " ") }
        let today = calendar.startOfDay(for: now)
        func day(_ offset: Int, _ length: Int) -> (TimeReference, Int) {
            let start = calendar.date(byAdding: .day, value: offset, to: today)!
            return (TimeReference(words: said(length), kind: .day, start: start, end: calendar.date(byAdding: .day, value: 1, to: start)!), length)
        }
        func on(_ date: Date, _ length: Int) -> (TimeReference, Int) {
            let start = calendar.startOfDay(for: date)
            return (TimeReference(words: said(length), kind: .day, start: start, end: calendar.date(byAdding: .day, value: 1, to: start)!), length)
        }
        func span(_ unit: Unit, _ offset: Int, _ length: Int) -> (TimeReference, Int) {
            let component: Calendar.Component = unit == .week ? .weekOfYear : unit == .month ? .month : unit == .year ? .year : .day
            let interval = calendar.dateInterval(of: component, for: calendar.date(byAdding: component, value: offset, to: now)!)!
            return (TimeReference(words: said(length), kind: .span, start: interval.start, end: interval.end), length)
        }
        func moved(_ count: Int, _ unit: Unit, _ length: Int) -> (TimeReference, Int) {
            let component: Calendar.Component = unit == .week ? .weekOfYear : unit == .month ? .month : unit == .year ? .year : .day
            return on(calendar.date(byAdding: component, value: count, to: now)!, length)
        }
        /// The first `weekday` after today (`after`), the last before it (`before`), or from today on.
        func weekday(_ target: Int, direction: Int) -> Date {
            let current = calendar.component(.weekday, from: today)
            var delta = (target - current + 7) % 7
            if direction > 0 && delta == 0 { delta = 7 }
            if direction < 0 { delta = delta == 0 ? -7 : delta - 7 }
            return calendar.date(byAdding: .day, value: delta, to: today)!
        }
        func month(_ number: Int, since: Bool, _ length: Int) -> (TimeReference, Int) {
            var parts = calendar.dateComponents([.year], from: now)
            parts.month = number
            parts.day = 1
            var start = calendar.date(from: parts)!
            if since, start > now { start = calendar.date(byAdding: .year, value: -1, to: start)! }
            let end = calendar.date(byAdding: .month, value: 1, to: start)!
            return (TimeReference(words: said(length), kind: since ? .since : .span, start: start, end: since ? nil : end), length)
        }
        func year(_ text: String?) -> Int? {
            guard let text, text.count == 4, let value = Int(text), (1900...2200).contains(value) else { return nil }
            return value
        }
        func count(_ text: String?) -> Int? { text.flatMap { numbers[$0] ?? Int($0) } }
        func unit(_ text: String?) -> Unit? { text.flatMap { englishUnits[$0] ?? ukrainianUnits[$0] } }
        let first = w[i]

        // English
        if first == "the", word(1) == "day", word(2) == "before", word(3) == "yesterday" { return day(-2, 4) }
        if first == "the", word(1) == "day", word(2) == "after", word(3) == "tomorrow" { return day(2, 4) }
        if let offset = days[first] { return day(offset, 1) }
        if ["last", "this", "next"].contains(first) {
            let offset = first == "last" ? -1 : first == "next" ? 1 : 0
            if let spanUnit = unit(word(1)), spanUnit != .day { return span(spanUnit, offset, 2) }
            if let target = word(1).flatMap({ weekdays[$0] }) { return on(weekday(target, direction: offset == 0 ? 1 : offset), 2) }
        }
        if ["through", "until", "till", "til", "thru"].contains(first) {
            if let target = word(1).flatMap({ weekdays[$0] }) {
                return (TimeReference(words: said(2), kind: .until, start: nil,
                                      end: calendar.date(byAdding: .day, value: 1, to: weekday(target, direction: 0))!), 2)
            }
            if let offset = word(1).flatMap({ days[$0] }) {
                return (TimeReference(words: said(2), kind: .until, start: nil, end: calendar.date(byAdding: .day, value: offset + 1, to: today)!), 2)
            }
            if word(1) == "next", let spanUnit = unit(word(2)), spanUnit != .day {
                let (reference, _) = span(spanUnit, 1, 3)
                return (TimeReference(words: said(3), kind: .until, start: nil, end: reference.end), 3)
            }
        }
        if first == "in", let n = count(word(1)), let stepUnit = unit(word(2)) { return moved(n, stepUnit, 3) }
        if first == "in", word(1) == "a", word(2) == "couple", word(3) == "of", let stepUnit = unit(word(4)) { return moved(2, stepUnit, 5) }
        if let n = count(first), let stepUnit = unit(word(1)), word(2) == "ago" { return moved(-n, stepUnit, 3) }
        if first == "in", let number = word(1).flatMap({ months[$0] }), englishMonth(word(1)) { return month(number, since: false, 2) }
        if first == "since", let number = word(1).flatMap({ months[$0] }), englishMonth(word(1)) { return month(number, since: true, 2) }
        if first == "in" || first == "since", let value = year(word(1)) {
            let start = calendar.date(from: DateComponents(year: value, month: 1, day: 1))!
            return (TimeReference(words: said(2), kind: first == "since" ? .since : .span, start: start,
                                  end: first == "since" ? nil : calendar.date(byAdding: .year, value: 1, to: start)), 2)
        }

        // Ukrainian
        let last = ["минулого", "минулої", "минулий", "минулу", "минулому"], this = ["цього", "цієї", "цей", "цю", "цьому"]
        let next = ["наступного", "наступної", "наступний", "наступну", "наступному"]
        var lead = 0
        if ["в", "у", "на"].contains(first), let second = word(1), (last + this + next).contains(second) { lead = 1 }
        if let which = word(lead), (last + this + next).contains(which) {
            let offset = last.contains(which) ? -1 : next.contains(which) ? 1 : 0
            if let spanUnit = unit(word(lead + 1)), spanUnit != .day { return span(spanUnit, offset, lead + 2) }
            if let target = word(lead + 1).flatMap({ weekdays[$0] }) { return on(weekday(target, direction: offset == 0 ? 1 : offset), lead + 2) }
        }
        if first == "до", let target = word(1).flatMap({ weekdays[$0] }) {
            return (TimeReference(words: said(2), kind: .until, start: nil,
                                  end: calendar.date(byAdding: .day, value: 1, to: weekday(target, direction: 0))!), 2)
        }
        if first == "через" {
            if let n = count(word(1)), let stepUnit = unit(word(2)) { return moved(n, stepUnit, 3) }
            if let stepUnit = unit(word(1)) { return moved(1, stepUnit, 2) }
        }
        if let n = count(first), let stepUnit = unit(word(1)), word(2) == "тому" { return moved(-n, stepUnit, 3) }
        if let stepUnit = unit(first), word(1) == "тому", ukrainianUnits[first] != nil { return moved(-1, stepUnit, 2) }
        if ["в", "у"].contains(first), let number = word(1).flatMap({ months[$0] }), !englishMonth(word(1)) { return month(number, since: false, 2) }
        if ["з", "із", "від"].contains(first), let number = word(1).flatMap({ months[$0] }), !englishMonth(word(1)) { return month(number, since: true, 2) }
        return nil
    }

    static func englishMonth(_ word: String?) -> Bool { word.map { $0.unicodeScalars.allSatisfy(\.isASCII) } ?? false }
}
