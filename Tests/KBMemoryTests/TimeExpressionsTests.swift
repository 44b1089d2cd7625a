import Foundation
import KBMemory
import Testing

/// Relative and named dates in English, Ukrainian, Russian and Arabic, resolved for a turn said on Thursday
/// 26 November 2026 at 10:00 UTC.
@Suite struct TimeExpressionsTests {
    static let said = ISO8601DateFormatter().date(from: "2026-11-26T10:00:00Z")!

    static func day(_ text: String) -> Date { ISO8601DateFormatter().date(from: text + "T00:00:00Z")! }

    /// Phrase → kind, first day (or nil), day after the last (or nil).
    static let table: [(String, TimeReference.Kind, String?, String?)] = [
        ("yesterday", .day, "2026-11-25", "2026-11-26"),
        ("today", .day, "2026-11-26", "2026-11-27"),
        ("tomorrow", .day, "2026-11-27", "2026-11-28"),
        ("the day before yesterday", .day, "2026-11-24", "2026-11-25"),
        ("the day after tomorrow", .day, "2026-11-28", "2026-11-29"),
        ("last week", .span, "2026-11-16", "2026-11-23"),
        ("this week", .span, "2026-11-23", "2026-11-30"),
        ("next week", .span, "2026-11-30", "2026-12-07"),
        ("last month", .span, "2026-10-01", "2026-11-01"),
        ("next month", .span, "2026-12-01", "2027-01-01"),
        ("last year", .span, "2025-01-01", "2026-01-01"),
        ("next Thursday", .day, "2026-12-03", "2026-12-04"),
        ("last Thursday", .day, "2026-11-19", "2026-11-20"),
        ("next Monday", .day, "2026-11-30", "2026-12-01"),
        ("last Friday", .day, "2026-11-20", "2026-11-21"),
        ("through Sunday", .until, nil, "2026-11-30"),
        ("until Thursday", .until, nil, "2026-11-27"),
        ("till tomorrow", .until, nil, "2026-11-28"),
        ("until next week", .until, nil, "2026-12-07"),
        ("in two weeks", .day, "2026-12-10", "2026-12-11"),
        ("in 3 days", .day, "2026-11-29", "2026-11-30"),
        ("in a month", .day, "2026-12-26", "2026-12-27"),
        ("in a couple of days", .day, "2026-11-28", "2026-11-29"),
        ("two days ago", .day, "2026-11-24", "2026-11-25"),
        ("a week ago", .day, "2026-11-19", "2026-11-20"),
        ("in March", .span, "2026-03-01", "2026-04-01"),
        ("since March", .since, "2026-03-01", nil),
        ("since December", .since, "2025-12-01", nil),
        ("in 2024", .span, "2024-01-01", "2025-01-01"),
        ("since 2020", .since, "2020-01-01", nil),
        ("вчора", .day, "2026-11-25", "2026-11-26"),
        ("учора", .day, "2026-11-25", "2026-11-26"),
        ("позавчора", .day, "2026-11-24", "2026-11-25"),
        ("завтра", .day, "2026-11-27", "2026-11-28"),
        ("післязавтра", .day, "2026-11-28", "2026-11-29"),
        ("минулого тижня", .span, "2026-11-16", "2026-11-23"),
        ("на наступному тижні", .span, "2026-11-30", "2026-12-07"),
        ("наступного місяця", .span, "2026-12-01", "2027-01-01"),
        ("минулого року", .span, "2025-01-01", "2026-01-01"),
        ("наступного четверга", .day, "2026-12-03", "2026-12-04"),
        ("у наступний четвер", .day, "2026-12-03", "2026-12-04"),
        ("минулої п'ятниці", .day, "2026-11-20", "2026-11-21"),
        ("в минулу пʼятницю", .day, "2026-11-20", "2026-11-21"),
        ("до неділі", .until, nil, "2026-11-30"),
        ("через два тижні", .day, "2026-12-10", "2026-12-11"),
        ("через тиждень", .day, "2026-12-03", "2026-12-04"),
        ("через 3 дні", .day, "2026-11-29", "2026-11-30"),
        ("три дні тому", .day, "2026-11-23", "2026-11-24"),
        ("тиждень тому", .day, "2026-11-19", "2026-11-20"),
        ("у березні", .span, "2026-03-01", "2026-04-01"),
        ("з березня", .since, "2026-03-01", nil),
        ("з грудня", .since, "2025-12-01", nil),
        ("until the end of the month", .until, nil, "2026-12-01"),
        ("до кінця тижня", .until, nil, "2026-11-30"),
        // Russian
        ("вчера", .day, "2026-11-25", "2026-11-26"),
        ("послезавтра", .day, "2026-11-28", "2026-11-29"),
        ("на прошлой неделе", .span, "2026-11-16", "2026-11-23"),
        ("на следующей неделе", .span, "2026-11-30", "2026-12-07"),
        ("в следующем месяце", .span, "2026-12-01", "2027-01-01"),
        ("в прошлом году", .span, "2025-01-01", "2026-01-01"),
        ("в следующий четверг", .day, "2026-12-03", "2026-12-04"),
        ("в следующую пятницу", .day, "2026-11-27", "2026-11-28"),
        ("в прошлую пятницу", .day, "2026-11-20", "2026-11-21"),
        ("до пятницы", .until, nil, "2026-11-28"),
        ("до воскресенья", .until, nil, "2026-11-30"),
        ("до конца месяца", .until, nil, "2026-12-01"),
        ("через две недели", .day, "2026-12-10", "2026-12-11"),
        ("через неделю", .day, "2026-12-03", "2026-12-04"),
        ("три дня назад", .day, "2026-11-23", "2026-11-24"),
        ("неделю назад", .day, "2026-11-19", "2026-11-20"),
        ("в марте", .span, "2026-03-01", "2026-04-01"),
        ("с марта", .since, "2026-03-01", nil),
        // Arabic, with and without marks, with prefixes
        ("أمس", .day, "2026-11-25", "2026-11-26"),
        ("غداً", .day, "2026-11-27", "2026-11-28"),
        ("وغدا", .day, "2026-11-27", "2026-11-28"),
        ("بعد غد", .day, "2026-11-28", "2026-11-29"),
        ("أول أمس", .day, "2026-11-24", "2026-11-25"),
        ("الأسبوع الماضي", .span, "2026-11-16", "2026-11-23"),
        ("الأسبوع القادم", .span, "2026-11-30", "2026-12-07"),
        ("في الشهر المقبل", .span, "2026-12-01", "2027-01-01"),
        ("السنة الماضية", .span, "2025-01-01", "2026-01-01"),
        ("هذا الأسبوع", .span, "2026-11-23", "2026-11-30"),
        ("الخميس القادم", .day, "2026-12-03", "2026-12-04"),
        ("يوم الخميس القادم", .day, "2026-12-03", "2026-12-04"),
        ("الجمعة الماضية", .day, "2026-11-20", "2026-11-21"),
        ("يوم الأحد", .day, "2026-11-29", "2026-11-30"),
        ("حتى الجمعة", .until, nil, "2026-11-28"),
        ("حتى يوم الأحد", .until, nil, "2026-11-30"),
        ("حتى نهاية الشهر", .until, nil, "2026-12-01"),
        ("بعد أسبوعين", .day, "2026-12-10", "2026-12-11"),
        ("بعد ثلاثة أيام", .day, "2026-11-29", "2026-11-30"),
        ("قبل أسبوع", .day, "2026-11-19", "2026-11-20"),
        ("في مارس", .span, "2026-03-01", "2026-04-01"),
        ("في شهر آذار", .span, "2026-03-01", "2026-04-01"),
        ("منذ تشرين الأول", .since, "2026-10-01", nil),
        ("منذ ديسمبر", .since, "2025-12-01", nil),
    ]

    @Test func everyPhrasingInTheTableResolves() {
        #expect(Self.table.count >= 30)
        for (phrase, kind, start, end) in Self.table {
            let found = TimeExpressions.find(in: phrase, at: Self.said)
            #expect(found.count == 1, "\(phrase): \(found)")
            guard let reference = found.first else { continue }
            #expect(reference.kind == kind, "\(phrase)")
            #expect(reference.start == start.map(Self.day), "\(phrase): start \(String(describing: reference.start))")
            #expect(reference.end == end.map(Self.day), "\(phrase): end \(String(describing: reference.end))")
        }
    }

    @Test func referencesAreFoundInsideSentencesAndKeepTheirWords() {
        let lisbon = TimeExpressions.find(in: "I'm in Lisbon through Sunday.", at: Self.said)
        #expect(lisbon.map(\.words) == ["through sunday"] && lisbon.first?.kind == .until)
        let interview = TimeExpressions.find(in: "My interview is next Thursday, and I quit smoking last week!", at: Self.said)
        #expect(interview.map(\.words) == ["next thursday", "last week"])
        #expect(interview.map(\.kind) == [.day, .span])
        let ukrainian = TimeExpressions.find(in: "Я кинув палити минулого тижня, а співбесіда наступного четверга.", at: Self.said)
        #expect(ukrainian.map(\.words) == ["минулого тижня", "наступного четверга"])
        // Words that only look like dates are left alone.
        #expect(TimeExpressions.find(in: "I may go to the park in the morning; she is in a band.", at: Self.said).isEmpty)
        #expect(TimeExpressions.find(in: "The day was long.", at: Self.said).isEmpty)
    }

    @Test func aTimeZoneMovesTheDays() {
        var kyiv = Calendar(identifier: .gregorian)
        kyiv.timeZone = TimeZone(identifier: "Europe/Kyiv")!
        // 23:30 UTC on the 26th is already the 27th in Kyiv: its "yesterday" is the 26th there.
        let late = ISO8601DateFormatter().date(from: "2026-11-26T23:30:00Z")!
        let found = TimeExpressions.find(in: "yesterday", at: late, calendar: kyiv)
        #expect(found.first?.start == ISO8601DateFormatter().date(from: "2026-11-25T22:00:00Z"))
    }

    @Test func documentationExample() {
        let said = ISO8601DateFormatter().date(from: "2026-11-26T10:00:00Z")!   // a Thursday
        let kind =
            TimeExpressions.find(in: "I'm in Lisbon through Sunday", at: said).first?.kind   // .until (end of 29 November)
        #expect(kind == .until)
    }
}
