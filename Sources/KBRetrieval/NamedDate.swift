import Foundation

/// A calendar date, or part of one, that a question names in words: "on May 3, 2023", "1 May,
/// 2022", "in March 2023", "in June", "in 2022", "у березні 2023". Conversational turns said on a
/// date that agrees with it gain a little in the turns stage (`Ranking.boost`). Pure.
///
/// ```swift
/// let date = NamedDate.find(in: "Who did Maria have dinner with on May 3, 2023?")
/// let said = date?.matches("2023-05-03")   // true
/// ```
public struct NamedDate: Sendable, Hashable {
    public var year: Int?
    public var month: Int?
    public var day: Int?

    public init(year: Int? = nil, month: Int? = nil, day: Int? = nil) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Whether a `YYYY-MM-DD` date agrees with every part named.
    public func matches(_ date: String) -> Bool {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return false }
        return (year.map { $0 == parts[0] } ?? true) && (month.map { $0 == parts[1] } ?? true) && (day.map { $0 == parts[2] } ?? true)
    }

    /// The first date `text` names, or nil. A month alone counts when written as a name with a
    /// capital (English: "in May", not "may"), or in Ukrainian; a year alone after "in", "of",
    /// "during", "since" or "у"/"в".
    public static func find(in text: String) -> NamedDate? {
        let words = text.split { !$0.isLetter && !$0.isNumber && $0 != "'" }.map(String.init)
        let lower = words.map { $0.lowercased() }
        for (index, word) in lower.enumerated() {
            guard let month = month(word) else { continue }
            let day = index > 0 ? dayNumber(lower[index - 1]) : nil
            let after = index + 1 < lower.count ? dayNumber(lower[index + 1]) : nil
            let yearIndex = index + (after != nil ? 2 : 1)
            let year = yearIndex < lower.count ? yearNumber(lower[yearIndex]) : nil
            let named = NamedDate(year: year, month: month, day: day ?? after)
            let capitalised = words[index].first.map { $0.isUppercase } ?? false
            if named.day != nil || named.year != nil || capitalised || !word.unicodeScalars.allSatisfy(\.isASCII) { return named }
        }
        for (index, word) in lower.enumerated() where index > 0 && ["in", "of", "during", "since", "у", "в"].contains(lower[index - 1]) {
            if let year = yearNumber(word) { return NamedDate(year: year) }
        }
        return nil
    }

    static let english = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                          "november", "december"]
    static let abbreviations = ["jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10,
                                "nov": 11, "dec": 12]
    /// Ukrainian month names in their nominative, genitive and locative forms.
    static let ukrainian: [String: Int] = {
        let forms = [["січень", "січня", "січні"], ["лютий", "лютого", "лютому"], ["березень", "березня", "березні"],
                     ["квітень", "квітня", "квітні"], ["травень", "травня", "травні"], ["червень", "червня", "червні"],
                     ["липень", "липня", "липні"], ["серпень", "серпня", "серпні"], ["вересень", "вересня", "вересні"],
                     ["жовтень", "жовтня", "жовтні"], ["листопад", "листопада", "листопаді"], ["грудень", "грудня", "грудні"]]
        var table: [String: Int] = [:]
        for (index, names) in forms.enumerated() { for name in names { table[name] = index + 1 } }
        return table
    }()

    static func month(_ word: String) -> Int? {
        if let index = english.firstIndex(of: word) { return index + 1 }
        return abbreviations[word] ?? ukrainian[word]
    }

    static func dayNumber(_ word: String) -> Int? {
        let digits = word.prefix { $0.isNumber }
        guard !digits.isEmpty, digits.count <= 2, ["", "st", "nd", "rd", "th"].contains(String(word.dropFirst(digits.count))),
              let day = Int(digits), (1...31).contains(day) else { return nil }
        return day
    }

    static func yearNumber(_ word: String) -> Int? {
        guard word.count == 4, let year = Int(word), (1900...2100).contains(year) else { return nil }
        return year
    }
}
