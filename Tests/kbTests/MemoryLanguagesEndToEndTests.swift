import Foundation
import Testing

/// What Arabic, Russian, Ukrainian and English speakers tell a bot, learned by kb's own rules
/// through `kb serve` and recalled with a question in the user's language, with the model a user
/// gets by default (multilingual-e5-small).
@Suite(.enabled(if: InstalledModels.multilingual || ProcessInfo.processInfo.environment["CI"] == "true",
                "multilingual-e5-small is not installed (scripts/install-model.sh multilingual-e5-small)"))
struct MemoryLanguagesEndToEndTests {
    /// A user's turns, and questions with the memory that should answer each first.
    static let users: [(user: String, turns: [String], questions: [(String, String)])] = [
        ("fatima", ["اسمي فاطمة وأعيش في عمّان.", "عندي حساسية من الفول السوداني.", "أعمل مهندسة في شركة اتصالات."],
         [("أين أعيش؟", "تعيش في عمان."), ("ما الذي عندي حساسية منه؟", "لديها حساسية من الفول السوداني."),
          ("ما هي وظيفتي؟", "تعمل مهندسة في شركة اتصالات."), ("ما اسمي؟", "اسمها فاطمة.")]),
        ("oleg", ["Меня зовут Олег и я живу в Казани.", "У меня аллергия на арахис.", "Я работаю врачом."],
         [("Где я живу?", "Живёт в Казани."), ("На что у меня аллергия?", "Аллергия на арахис."), ("Кем я работаю?", "Работает врачом."),
          ("Как меня зовут?", "Зовут Олег.")]),
        ("olena", ["Мене звати Олена, я живу у Львові.", "У мене алергія на горіхи.", "Я працюю в школі."],
         [("Де я живу?", "Живе у Львові."), ("На що в мене алергія?", "Алергія на горіхи."), ("Як мене звати?", "Звати Олена.")]),
        ("ada", ["I live in Paris and my name is Ada.", "I'm allergic to penicillin.", "I work as a nurse."],
         [("Where do I live?", "Lives in Paris."), ("What am I allergic to?", "Allergic to penicillin."), ("What is my job?", "Works as a nurse.")]),
    ]

    @Test func aRecallQuestionInTheUsersLanguageFindsTheirMemoryFirst() async throws {
        let cli = try CLI()
        try cli.write("notes/tea.md", "# Tea\n\nGreen tea is steamed or pan-fired; black tea is oxidised before it is dried.")
        let ingest = try await cli.run(["ingest", "--db", "kb.sqlite", "notes"], environment: MultilingualDefaultTests.defaults)
        #expect(ingest.status == 0, "\(ingest.stderr)")

        let served = try await ServedIndex(cli, token: "memory-languages-token-0123456789",
                                           environment: MultilingualDefaultTests.defaults.merging(["HOME": cli.workdir.path]) { $1 })
        defer { served.stop() }

        for (user, turns, questions) in Self.users {
            let (status, extraction) = try await served.post("v1/memories/extract",
                                                             ["user": user, "apply": true, "turns": turns.map { ["role": "user", "content": $0] }])
            #expect(status == 200, "\(String(describing: extraction))")
            let stored = (extraction?["proposals"] as? [[String: Any]] ?? []).compactMap { $0["memory"] as? String }
            #expect(stored.count == 4, "\(user): every fact of the three turns is stored, \(String(describing: extraction))")
            for (question, expected) in questions {
                let (status, answer) = try await served.post("v1/memories/search", ["query": question, "scopes": ["user:\(user)"]])
                #expect(status == 200)
                let hits = (answer?["hits"] as? [[String: Any]] ?? []).compactMap { ($0["memory"] as? [String: Any])?["content"] as? String }
                #expect(hits.first == expected, "\(user): \(question) → \(hits)")
            }
        }
    }
}
