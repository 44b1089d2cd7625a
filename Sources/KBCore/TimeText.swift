public import Foundation

/// Times as requests give them: an ISO 8601 date (`2026-03-01`, midnight UTC) or date and time
/// (`2026-03-01T12:00`, `2026-03-01T12:00:00.250Z`, `2026-03-01T14:00:00+02:00`; no zone is UTC).
///
/// ```swift
/// let time = try TimeText.parse("2026-03-01T12:00:00Z", name: "asOf")
/// ```
public enum TimeText {
    /// The pattern request schemas state for such a time: only real dates (February 29 in leap
    /// years), hours 00–23, minutes and seconds 00–59.
    public static let pattern = "^(" + date + ")([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,9})?)?(Z|z|[+-][0-9]{2}:?[0-9]{2})?)?$"
    private static let date = "[0-9]{4}-((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31)"
        + "|([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)-02-29"
    private static let expression = try! NSRegularExpression(
        pattern: "^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(\\.[0-9]{1,9})?)?(Z|z|([+-])([0-9]{2}):?([0-9]{2}))?)?$")

    /// The time `text` names; `name` is the field's, for the message when it names none.
    public static func parse(_ text: String, name: String) throws -> Date {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let whole = NSRange(trimmed.startIndex..., in: trimmed)
        func fail() -> KBError {
            KBError(.invalidArgument, "\"\(name)\" must be an ISO 8601 date or time, like 2026-03-01 or 2026-03-01T12:00:00Z; got \"\(text)\".")
        }
        guard let match = expression.firstMatch(in: trimmed, range: whole), match.range == whole else { throw fail() }
        func group(_ i: Int) -> String? {
            guard let range = Range(match.range(at: i), in: trimmed) else { return nil }
            return String(trimmed[range])
        }
        func number(_ i: Int) -> Int { group(i).flatMap { Int($0) } ?? 0 }
        var components = DateComponents()
        components.year = number(1)
        components.month = number(2)
        components.day = number(3)
        components.hour = number(4)
        components.minute = number(5)
        components.second = number(6)
        guard (1...12).contains(number(2)), (1...31).contains(number(3)), number(4) < 24, number(5) < 60, number(6) < 60 else { throw fail() }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let base = calendar.date(from: components), calendar.component(.day, from: base) == number(3) else { throw fail() }
        var seconds = base.timeIntervalSince1970
        if let fraction = group(7), let value = Double("0" + fraction) { seconds += value }
        if let sign = group(9) {
            let offset = Double(number(10) * 3600 + number(11) * 60)
            seconds -= sign == "+" ? offset : -offset
        }
        return Date(timeIntervalSince1970: seconds)
    }
}
