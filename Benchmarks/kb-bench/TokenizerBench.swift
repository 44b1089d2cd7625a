import Foundation
import KBEmbed

/// The SentencePiece Unigram tokenizer at a real model's scale: the tiny fixture's tokenizer.json
/// (its charsmap, pre-tokenizer and post-processor) with its vocabulary grown to `pieces` entries
/// (every 1–4-letter string over a mixed Latin/Cyrillic/Arabic alphabet, with ▁ variants, random
/// scores), then load time, resident memory and tokenisation speed on mixed-language passages.
func benchUnigramTokenizer(fixture: String, pieces: Int) throws -> [String: Any] {
    var json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: fixture))) as! [String: Any]
    var model = json["model"] as! [String: Any]
    var vocab = model["vocab"] as! [[Any]]
    let alphabet = Array("abcdefghijklmnopqrstuvwxyzабвгдеєжзиіїйклмнопрстуфхцчшщьюяابتثجحخدذرزسشصضطظعغفقكلمنهوي")
    var generator = SystemRandomNumberGenerator()
    var seen = Set(vocab.map { $0[0] as! String })
    var frontier = [""]
    grow: while true {
        var next: [String] = []
        for stem in frontier {
            for letter in alphabet {
                let piece = stem + String(letter)
                next.append(piece)
                for candidate in [piece, "\u{2581}" + piece] where seen.insert(candidate).inserted {
                    vocab.append([candidate, -Double.random(in: 2...18, using: &generator)])
                    if vocab.count >= pieces { break grow }
                }
            }
        }
        frontier = next
    }
    model["vocab"] = vocab
    json["model"] = model
    let data = try JSONSerialization.data(withJSONObject: json)
    let rssBefore = peakResidentMB()
    let start = now()
    let tokenizer = try UnigramTokenizer(json: data, source: "synthetic tokenizer.json")
    let loadSeconds = now() - start
    let passages = (0..<500).map { i in
        ["Saturn returns after about twenty-nine years and marks a turning point number \(i).",
         "Сатурн повертається приблизно через двадцять дев'ять років, і це поворотний момент \(i).",
         "يعود زحل بعد نحو تسع وعشرين سنة، وهي نقطة تحول رقم \(i)."][i % 3]
    }
    let characters = passages.reduce(0) { $0 + $1.count }
    var tokens = 0
    let encodeStart = now()
    for passage in passages { tokens += tokenizer.encode(passage, maxLength: 512).count }
    let encodeSeconds = now() - encodeStart
    return [
        "pieces": vocab.count, "json_mb": Double(data.count) / 1e6, "load_seconds": loadSeconds,
        "peak_rss_growth_mb": peakResidentMB() - rssBefore, "passages": passages.count, "tokens": tokens,
        "passages_per_second": Double(passages.count) / encodeSeconds, "characters_per_second": Double(characters) / encodeSeconds,
    ]
}
