import Foundation

/// kb's memory rules for Arabic (see `ExplicitMemories` for what each kind of sentence becomes).
/// Sentences are read without their short-vowel marks (`عمّان` is `عمان`, `مهندساً` is
/// `مهندسا`); each pattern matches every way of writing alif (ا أ إ آ), ya (ي ى) and ta marbuta
/// (ة ه); a word may carry و or ف (and, so: `وأعيش`), and "in" may be the prefix ب (`بالقاهرة`).
/// A memory is worded in the third person — `يعيش في القاهرة.` — in the feminine when the user
/// speaks of herself so anywhere in the conversation (`أنا مهندسة`, `أعمل طبيبة`, `متزوجة`).
extension ExplicitMemories {
    /// A pattern written with plain letters, matching every form of them.
    static func ar(_ pattern: String) -> String { ArabicText.pattern(pattern) }

    /// A word start, with the conjunction it may carry.
    static let arabicStart = "(?:^|\\s)(?:و|ف)?"
    static let arabicIn = "(?:في\\s+|(?=بال)ب)"

    static let arabic: [Rule] = [
        Rule(ar("^(?:من فضلك|رجاء|ارجو)?[،,]?\\s*(?:و|ف)?(?:تذكر|تذكري|تذكروا|احفظ|احفظي|سجل|سجلي|لا تنس|لا تنسى|لا تنسي)[،,]?\\s+(?:انني\\s+|اني\\s+|ان\\s+)?(.+)$")) {
            sentenceCase($0)
        },
        Rule(ar("^(?:من فضلك|رجاء)?[،,]?\\s*(?:انس|انسى|انسي|انسوا)[،,]?\\s+(?:انني\\s+|اني\\s+|ان\\s+|موضوع\\s+|امر\\s+)?(.+)$"), .forget) { sentenceCase($0) },
        .worded(ar(arabicStart + "(?:عندي|لدي|لدى|اعاني من)\\s+(?:حساسية|تحسس)\\s+(?:من|ضد|تجاه)\\s+(.+)$"), tags: ["health", "allergy"]) {
            $0.gendered("لديه حساسية من \($0.text).", "لديها حساسية من \($0.text).")
        },
        .worded(ar(arabicStart + "(?:عندي|لدي|لدى|اعاني من)\\s+(?:حساسية|تحسس)\\s+(ل.+)$"), tags: ["health", "allergy"]) {
            $0.gendered("لديه حساسية من \(object($0.text)).", "لديها حساسية من \(object($0.text)).")
        },
        .worded(ar(arabicStart + "(?:انا\\s+)?(?:حساس|حساسة)\\s+(?:من|ضد|تجاه)\\s+(.+)$"), tags: ["health", "allergy"]) {
            $0.gendered("لديه حساسية من \($0.text).", "لديها حساسية من \($0.text).")
        },
        .worded(ar(arabicStart + "(?:انا\\s+)?(?:حساس|حساسة)\\s+(ل.+)$"), tags: ["health", "allergy"]) {
            $0.gendered("لديه حساسية من \(object($0.text)).", "لديها حساسية من \(object($0.text)).")
        },
        .worded(ar(arabicStart + "(?:انا\\s+)?(?:اسمي(?:\\s+الجديد)?(?:\\s+هو|\\s+هي)?|ادعى|ينادونني|نادني|نادوني|ناديني|يسمونني|سمني|سميني)\\s+(.+)$"),
                tags: ["name"], fact: "name") { $0.gendered("اسمه \($0.text).", "اسمها \($0.text).") },
        .worded(ar(arabicStart + "(?:(?:انا|نحن)\\s+)?(?:الان\\s+|حاليا\\s+)?(?:اعيش|اسكن|اقيم|نعيش|نسكن|نقيم|مقيم|مقيمة|ساكن|ساكنة)\\s+(?:الان\\s+|حاليا\\s+)?"
                   + arabicIn + "(.+)$"), tags: ["home"], fact: "home") { $0.gendered("يعيش في \($0.text).", "تعيش في \($0.text).") },
        .worded(ar(arabicStart + "(?:(?:انا|نحن)\\s+)?(?:قد\\s+|للتو\\s+)?(?:انتقلت|انتقلنا|رحلت|رحلنا|استقريت|استقررت|استقرينا|استقررنا|هاجرت|هاجرنا)"
                   + "\\s+(?:للعيش\\s+|للسكن\\s+)?(?:الى|في)\\s+(.+)$"), tags: ["home"], fact: "home") {
            $0.gendered("يعيش في \($0.text).", "تعيش في \($0.text).")
        },
        .worded(ar(arabicStart + "(?:(?:انا|نحن)\\s+)?(?:قد\\s+|للتو\\s+)?(?:انتقلت|انتقلنا|رحلت|رحلنا|هاجرت|هاجرنا)\\s+(ل.+)$"), tags: ["home"], fact: "home") {
            $0.gendered("يعيش في \(object($0.text)).", "تعيش في \(object($0.text)).")
        },
        .worded(ar(arabicStart + "(?:بيتي|منزلي|شقتي|سكني)(?:\\s+الجديد|\\s+الجديدة)?\\s+(?:الان\\s+)?" + arabicIn + "(.+)$"), tags: ["home"], fact: "home") {
            $0.gendered("يعيش في \($0.text).", "تعيش في \($0.text).")
        },
        .worded(ar(arabicStart + "(?:(?:لم اعد|لست)\\s+(نباتي|نباتية|نباتيا)|(?:عدت|رجعت)\\s+(?:الى|ل)\\s*(اكل اللحم|اكل اللحوم|تناول اللحوم))"),
                tags: ["diet"], fact: "diet") { $0.gendered("يأكل اللحم.", "تأكل اللحم.") },
        .worded(ar(arabicStart + "(?:انا|اصبحت|صرت)\\s+(?:الان\\s+)?(نباتي|نباتية|نباتيا)(?:\\s+(صرف|صرفة|صرفا|تماما|بالكامل))?(?=\\s|$)"),
                tags: ["diet"], fact: "diet") { said in
            let vegan = !said.text.hasPrefix("نباتي")
            return said.gendered("نباتي", "نباتية") + (vegan ? said.gendered(" صرف", " صرفة") : "") + "."
        },
        .worded(ar(arabicStart + "(?:توقفت عن|تركت|اقلعت عن|امتنعت عن|لم اعد|ما عدت|لا)\\s+(?:اكل\\s+|اتناول\\s+|تناول\\s+)?(اللحم|اللحوم|لحم|لحوم)(?=\\s|$)"),
                tags: ["diet"], fact: "diet") { $0.gendered("لا يأكل اللحم.", "لا تأكل اللحم.") },
        .worded(ar(arabicStart + "عيد\\s+ميلادي\\s+(?:هو\\s+)?(?:في\\s+|يوم\\s+)?(.+)$"), tags: ["birthday"], fact: "birthday") {
            $0.gendered("عيد ميلاده \($0.text).", "عيد ميلادها \($0.text).")
        },
        .worded(ar(arabicStart + "(?:انا\\s+)?(?:ولدت|مولود|مولودة)\\s+(?:في\\s+|يوم\\s+|سنة\\s+|عام\\s+)?(.+)$"), tags: ["birthday"], fact: "birthday") {
            $0.gendered("ولد في \($0.text).", "ولدت في \($0.text).")
        },
        .worded(ar(arabicStart + "(?:انا\\s+)?(?:الان\\s+|حاليا\\s+)?(?:اعمل|اشتغل|نعمل)\\s+(?:الان\\s+|حاليا\\s+)?(.+)$"), tags: ["work"], fact: "work") {
            $0.gendered("يعمل \($0.text).", "تعمل \($0.text).")
        },
        .worded(ar(arabicStart + "(?:بدات العمل|بدات اعمل|توظفت|تعينت|عينت|التحقت بالعمل|حصلت على وظيفة|حصلت على عمل|وجدت عملا|وجدت وظيفة)"
                   + "\\s+(?:جديدة\\s+|جديدا\\s+)?(.+)$"), tags: ["work"], fact: "work") { $0.gendered("يعمل \($0.text).", "تعمل \($0.text).") },
        .worded(ar(arabicStart + "(?:وظيفتي|مهنتي)\\s+(?:الجديدة\\s+)?(?:هي\\s+)?(.+)$"), tags: ["work"], fact: "work") {
            $0.gendered("يعمل \($0.text).", "تعمل \($0.text).")
        },
        .worded(ar(arabicStart + "(?:(?:عدت|رجعت)\\s+(?:الى|ل)\\s*(التدخين)|(?:عدت|رجعت)\\s+(ادخن)|(?:بدات|رجعت)\\s+(?:ادخن|التدخين)\\s+(من جديد|مجددا|ثانية))"),
                tags: ["habit"], fact: "smoking") { $0.gendered("عاد إلى التدخين.", "عادت إلى التدخين.") },
        .worded(ar(arabicStart + "(?:اقلعت|توقفت|تركت|بطلت|امتنعت)\\s+(?:عن\\s+)?(التدخين|السجائر|السجاير|الدخان)"), tags: ["habit"], fact: "smoking") {
            $0.gendered("أقلع عن التدخين.", "أقلعت عن التدخين.")
        },
        .worded(ar(arabicStart + "(?:اقلعت|توقفت|تركت|بطلت|امتنعت)\\s+(?:عن\\s+)?(?:شرب\\s+)?(الكحول|الخمر|الكحوليات)"), tags: ["habit"], fact: "drinking") {
            $0.gendered("أقلع عن الكحول.", "أقلعت عن الكحول.")
        },
        .worded(ar(arabicStart + "(?:انا\\s+)?(?:تزوجت|تزوجنا|متزوج|متزوجة)\\s+(?:من\\s+)(.+)$"), tags: ["family"], fact: "partner") {
            $0.gendered("متزوج من \($0.text).", "متزوجة من \($0.text).")
        },
        Rule(ar(arabicStart + "زوجي\\s+اسمه\\s+(.+)$"), tags: ["family"], fact: "partner") { "متزوجة من \($0)." },
        Rule(ar(arabicStart + "زوجتي\\s+اسمها\\s+(.+)$"), tags: ["family"], fact: "partner") { "متزوج من \($0)." },
        .worded(ar("^(?:و|ف)?(?:انا|ساكون|سابقى|ساظل|نحن)\\s+(?:الان\\s+|حاليا\\s+)?(?:موجود\\s+|موجودة\\s+|مسافر\\s+|مسافرة\\s+)?" + arabicIn + "(.+)$"),
                tags: ["whereabouts"], fact: "whereabouts", needsTime: true) { $0.gendered("موجود في \($0.text).", "موجودة في \($0.text).") },
        Rule(ar(arabicStart + "((?:موعدي|مقابلتي|امتحاني|اختباري|اجتماعي|رحلتي|سفري|عرسي|زفافي|حفلتي|عمليتي|موعد)\\s+.+)$"), tags: ["plan"], needsTime: true) {
            possessed($0)
        },
        Rule(ar(arabicStart + "(?:عندي|لدي|لدى)\\s+(.+)$"), tags: ["plan"], needsTime: true) { sentenceCase($0) },
        .worded(ar("^(?:و|ف)?(?:انا\\s+)?(?:لا احب|لا احبذ|اكره|لا يعجبني|لا تعجبني|لا اطيق|لا افضل)\\s+(.+)$"), tags: ["preference"]) {
            $0.gendered("لا يحب \($0.text).", "لا تحب \($0.text).")
        },
        .worded(ar("^(?:و|ف)?(?:انا\\s+)?(?:احب|افضل|اعشق|يعجبني|تعجبني|اهوى)\\s+(.+)$"), tags: ["preference"]) {
            $0.gendered("يحب \($0.text).", "تحب \($0.text).")
        },
        .worded(ar("^(?:و|ف)?(?:انا\\s+)?استمتع\\s+ب(.+)$"), tags: ["preference"]) { $0.gendered("يحب \($0.text).", "تحب \($0.text).") },
    ]

    /// What follows the prefix ل ("to", "for"): `للفول` is `الفول`, `لعمان` is `عمان`.
    static func object(_ text: String) -> String {
        if text.hasPrefix("لل") { return "ال" + text.dropFirst(2) }
        return text.hasPrefix("ل") ? String(text.dropFirst()) : text
    }

    /// "مقابلة" from "مقابلتي" (my interview), "موعد" from "موعدي": the thing, not whose.
    static func possessed(_ text: String) -> String {
        var words = text.split(separator: " ").map(String.init)
        if let first = words.first {
            if first.hasSuffix("تي") { words[0] = String(first.dropLast(2)) + "ة" } else if first.hasSuffix("ي") { words[0] = String(first.dropLast()) }
        }
        return sentenceCase(words.joined(separator: " "))
    }
}
