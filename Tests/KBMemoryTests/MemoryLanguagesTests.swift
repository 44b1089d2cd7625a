import Foundation
import KBCore
import KBMemory
import Testing

/// kb's memory rules in each language they are written for: every pattern's fact, in the words
/// and the language the user said it in, tagged alike across languages; several facts in one
/// sentence; dates in each language.
@Suite struct MemoryLanguagesTests {
    /// Thursday 26 November 2026, 10:00 UTC.
    static let said = Date(timeIntervalSince1970: 1_795_687_200)

    static func day(_ text: String) -> Date { try! TimeText.parse(text, name: "day") }

    func found(_ text: String, time: Date? = said) -> [ExplicitMemories.Found] {
        ExplicitMemories.find(in: [ConversationTurn(.user, text, time: time)])
    }

    /// Sentence → memory, its fact (nil: none), its language.
    static let facts: [(String, String, String?, String)] = [
        // Arabic: with and without harakat, with و ف ب ل, both genders.
        ("تذكر أنني أحب القهوة بدون سكر.", "أحب القهوة بدون سكر.", nil, "ar"),
        ("عندي حساسية من الفول السوداني.", "لديه حساسية من الفول السوداني.", nil, "ar"),
        ("عِنْدِي حَسَاسِيَّةٌ مِنَ الفُولِ السُّودَانِيِّ", "لديه حساسية من الفول السوداني.", nil, "ar"),
        ("لدي حساسية للبنسلين", "لديه حساسية من البنسلين.", nil, "ar"),
        ("اسمي فاطمة.", "اسمه فاطمة.", "name", "ar"),
        ("أعيش في عمّان.", "يعيش في عمان.", "home", "ar"),
        ("واعيش بالقاهرة", "يعيش في القاهرة.", "home", "ar"),
        ("انتقلتُ إلى الإسكندرية", "يعيش في الإسكندرية.", "home", "ar"),
        ("انتقلنا للرياض", "يعيش في الرياض.", "home", "ar"),
        ("أنا نباتي", "نباتي.", "diet", "ar"),
        ("أنا نباتية صرفة", "نباتية صرفة.", "diet", "ar"),
        ("توقفت عن أكل اللحوم", "لا يأكل اللحم.", "diet", "ar"),
        ("لم أعد نباتياً", "يأكل اللحم.", "diet", "ar"),
        ("عيد ميلادي في ١٢ مايو", "عيد ميلاده ١٢ مايو.", "birthday", "ar"),
        ("أعمل مهندسة في أرامكو", "تعمل مهندسة في أرامكو.", "work", "ar"),
        ("أعمل مهندساً", "يعمل مهندسا.", "work", "ar"),
        ("توظفت في بنك مصر", "يعمل في بنك مصر.", "work", "ar"),
        ("أقلعت عن التدخين", "أقلع عن التدخين.", "smoking", "ar"),
        ("عدت إلى التدخين", "عاد إلى التدخين.", "smoking", "ar"),
        ("توقفت عن شرب الكحول", "أقلع عن الكحول.", "drinking", "ar"),
        ("تزوجت من أحمد", "متزوج من أحمد.", "partner", "ar"),
        ("زوجتي اسمها مريم", "متزوج من مريم.", "partner", "ar"),
        ("لا أحب الأفلام الطويلة", "لا يحب الأفلام الطويلة.", nil, "ar"),
        ("أحب الشعر العربي", "يحب الشعر العربي.", nil, "ar"),
        // Russian, with its cases.
        ("Запомни, что моя сестра Аня.", "Моя сестра Аня.", nil, "ru"),
        ("У меня аллергия на арахис.", "Аллергия на арахис.", nil, "ru"),
        ("Меня зовут Олег.", "Зовут Олег.", "name", "ru"),
        ("Я живу в Киеве.", "Живёт в Киеве.", "home", "ru"),
        ("Теперь я живу в Казани", "Живёт в Казани.", "home", "ru"),
        ("Я переехала в Казань", "Переехала в Казань.", "home", "ru"),
        ("Я вегетарианец", "Диета: вегетарианец.", "diet", "ru"),
        ("Я стала вегетарианкой", "Диета: вегетарианка.", "diet", "ru"),
        ("Я больше не ем мясо", "Не ест мяса.", "diet", "ru"),
        ("Мой день рождения 3 марта.", "День рождения: 3 марта.", "birthday", "ru"),
        ("Я работаю врачом", "Работает врачом.", "work", "ru"),
        ("Меня взяли на работу в Яндекс!", "Работает в Яндекс.", "work", "ru"),
        ("Я бросила курить.", "Бросила курить.", "smoking", "ru"),
        ("Я снова начал курить", "Снова курит.", "smoking", "ru"),
        ("Я вышла замуж за Ивана", "Вышла замуж за Ивана.", "partner", "ru"),
        ("Я не люблю длинные ответы", "Не любит длинные ответы.", nil, "ru"),
        ("Я очень люблю джаз", "Любит джаз.", nil, "ru"),
        ("Мне нравится зелёный чай", "Нравится зелёный чай.", nil, "ru"),
        // Ukrainian, what it lacked.
        ("Я народилася 5 травня 1992", "Народилася 5 травня 1992.", "birthday", "uk"),
        ("Я одружився з Оксаною", "Одружився з Оксаною.", "partner", "uk"),
        ("Я знову почав палити", "Знову палить.", "smoking", "uk"),
        ("Я кинув пити", "Кинув(ла) пити.", "drinking", "uk"),
        ("Я більше не вегетаріанка", "Їсть м'ясо.", "diet", "uk"),
        ("Я не люблю довгі відповіді", "Не любить довгі відповіді.", nil, "uk"),
        ("Я дуже люблю каву", "Любить каву.", nil, "uk"),
        ("Мені подобається джаз", "Подобається джаз.", nil, "uk"),
        ("Мене звати Олег.", "Звати Олег.", "name", "uk"),
    ]

    @Test func everyPatternGivesItsFactInTheLanguageItWasSaidIn() {
        for (sentence, content, fact, language) in Self.facts {
            let memories = found(sentence)
            #expect(memories.map(\.content) == [content], "\(sentence)")
            #expect(memories.first?.fact == fact, "\(sentence)")
            #expect(memories.first?.language == language, "\(sentence)")
            #expect(MemoryLanguage.of(content) == language || content.count < 12, "\(content) is not \(language)")
        }
    }

    /// The same fact is tagged the same in every language, so that a move in one supersedes a
    /// home said in another.
    @Test func tagsAreTheSameAcrossLanguages() {
        let homes = ["I live in Cairo.", "Я живу у Києві.", "Я живу в Казани.", "أعيش في القاهرة."].map { found($0).first?.tags }
        #expect(Set(homes.map { $0.map { $0.map(\.name) } }) == [["home", "fact:home"]])
        let allergies = ["I'm allergic to peanuts.", "У мене алергія на арахіс.", "У меня аллергия на арахис.", "عندي حساسية من الفول السوداني."]
        #expect(Set(allergies.map { found($0).first?.tags.map(\.name) }) == [["health", "allergy"]])
    }

    /// A language's sentence is read by its own rules only: Russian is never read by the
    /// Ukrainian rules where they happen to match, nor a language kb has no rules for by English's.
    @Test func onlyTheSentencesOwnLanguagesRulesReadIt() {
        #expect(found("Я живу в Киеве.").map(\.content) == ["Живёт в Киеве."])
        #expect(found("Я живу у Києві.").map(\.content) == ["Живе у Києві."])
        #expect(found("Ich wohne in Berlin und ich bin Vegetarier.").isEmpty)
        #expect(MemoryLanguage.of("Меня зовут Олег") == "ru" && MemoryLanguage.of("Мене звати Олег") == "uk")
        #expect(MemoryLanguage.of("اسمي فاطمة") == "ar" && MemoryLanguage.of("I live in Kyiv") == "en")
    }

    /// Several facts in one sentence are several memories; one fact with "and" in it stays one.
    @Test(arguments: [
        ("I live in Paris and my name is Ada.", ["Lives in Paris.", "Is called Ada."]),
        ("I live in Kyiv, work at MacPaw, and I'm vegetarian.", ["Lives in Kyiv.", "Works at MacPaw.", "Is vegetarian."]),
        ("I'm allergic to peanuts and tree nuts.", ["Allergic to peanuts and tree nuts."]),
        ("I like salt and pepper", ["Likes salt and pepper."]),
        ("اسمي فاطمة وأعيش في عمّان.", ["اسمه فاطمة.", "يعيش في عمان."]),
        ("أعمل طبيبة وعندي حساسية من البيض", ["تعمل طبيبة.", "لديها حساسية من البيض."]),
        ("Меня зовут Олег и я живу в Казани.", ["Зовут Олег.", "Живёт в Казани."]),
        ("Я работаю врачом и живу в Казани", ["Работает врачом.", "Живёт в Казани."]),
        ("Мене звати Олеся і я живу у Львові", ["Звати Олеся.", "Живе у Львові."]),
        ("Я живу в Одесі, працюю в школі", ["Живе в Одесі.", "Працює в школі."]),
    ])
    func severalFactsInOneSentence(sentence: String, contents: [String]) {
        #expect(found(sentence).map(\.content) == contents, "\(sentence)")
    }

    /// Dates in Arabic and Russian give valid time and expiry as English and Ukrainian ones do.
    @Test(arguments: [
        ("عندي مقابلة عمل الخميس القادم", "مقابلة عمل (الخميس القادم: 2026-12-03).", "2026-11-26T10:00:00Z", "2026-12-04"),
        ("مقابلتي يوم الخميس القادم", "مقابلة (يوم الخميس القادم: 2026-12-03).", "2026-11-26T10:00:00Z", "2026-12-04"),
        ("أنا في دبي حتى نهاية الشهر", "موجود في دبي (حتى نهاية الشهر: until 2026-11-30).", "2026-11-26T10:00:00Z", "2026-12-01"),
        ("أنا في جدة حتى الجمعة", "موجود في جدة (حتى الجمعة: until 2026-11-27).", "2026-11-26T10:00:00Z", "2026-11-28"),
        ("أقلعت عن التدخين الأسبوع الماضي", "أقلع عن التدخين (الأسبوع الماضي: 2026-11-16 – 2026-11-22).", "2026-11-16", nil),
        ("У меня собеседование в следующий четверг", "Собеседование (в следующий четверг: 2026-12-03).", "2026-11-26T10:00:00Z", "2026-12-04"),
        ("Я в Сочи до пятницы", "Находится в Сочи (до пятницы: until 2026-11-27).", "2026-11-26T10:00:00Z", "2026-11-28"),
        ("Я бросил курить на прошлой неделе", "Бросил курить (на прошлой неделе: 2026-11-16 – 2026-11-22).", "2026-11-16", nil),
        ("Я переехал в Казань в марте", "Переехал в Казань (в марте: 2026-03-01 – 2026-03-31).", "2026-03-01", nil),
    ] as [(String, String, String?, String?)])
    func datesInArabicAndRussian(text: String, content: String, validFrom: String?, expiresAt: String?) {
        let memory = found(text).first
        #expect(memory?.content == content, "\(text)")
        #expect(memory?.validFrom == validFrom.map(Self.day), "\(text): validFrom \(String(describing: memory?.validFrom))")
        #expect(memory?.expiresAt == expiresAt.map(Self.day), "\(text): expiresAt \(String(describing: memory?.expiresAt))")
    }

    /// Arabic memories are in the masculine unless the user speaks of herself in the feminine,
    /// anywhere in the conversation.
    @Test func arabicMemoriesTakeTheGenderTheUserSpeaksIn() {
        let turns = [ConversationTurn(.user, "أنا طالبة في الجامعة."), ConversationTurn(.assistant, "أهلا!"),
                     ConversationTurn(.user, "اسمي فاطمة. تزوجت من أحمد، وأحب الشعر")]
        #expect(ExplicitMemories.find(in: turns).map(\.content) == ["اسمها فاطمة.", "متزوجة من أحمد.", "تحب الشعر."])
        // "I love him" is neither a woman speaking nor a liking kb can word.
        #expect(found("أحبه كثيرا. اسمي سامي").map(\.content) == ["اسمه سامي."])
    }

    @Test func forgettingInArabicAndRussianIsAboutTheStatedFact() {
        let arabic = found("انسَ أنني أعيش في عمّان")
        #expect(arabic.map(\.kind) == [.forget] && arabic.first?.content == "يعيش في عمان.")
        let russian = found("Забудь, что я живу в Киеве")
        #expect(russian.map(\.kind) == [.forget] && russian.first?.content == "Живёт в Киеве.")
    }

    @Test func questionsAndPlansWithoutADateAreNotMemories() {
        #expect(found("أين أعيش؟").isEmpty)
        #expect(found("Где я живу?").isEmpty)
        #expect(found("عندي قطة جميلة").isEmpty)
        #expect(found("У меня кот").isEmpty)
        #expect(found("Я в хорошем настроении").isEmpty)
    }

    /// What a model proposes is checked against the language of the turn it comes from.
    @Test func aMemoryInAnotherLanguageThanItsTurnIsAMismatch() {
        #expect(MemoryLanguage.mismatch(content: "Lives in Amman.", said: "أعيش في عمّان") != nil)
        #expect(MemoryLanguage.mismatch(content: "Живе в Казані.", said: "Я живу в Казани, теперь это мой дом") != nil)
        #expect(MemoryLanguage.mismatch(content: "يعيش في عمان.", said: "أعيش في عمّان") == nil)
        #expect(MemoryLanguage.mismatch(content: "Живёт в Казани.", said: "Я живу в Казани") == nil)
        #expect(MemoryLanguage.mismatch(content: "Lives in Paris.", said: "I live in Paris") == nil)
        // Too short to tell: a name alone is not refused.
        #expect(MemoryLanguage.mismatch(content: "Ada", said: "Je m'appelle Ada") == nil)
    }
}
