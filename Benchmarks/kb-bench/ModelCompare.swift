import Foundation
import KBCore
import KBEmbed

/// One model's view of texts, for comparing kb's encoder with another implementation of the same
/// model (scripts/bench/bench-e5.sh): per text, the token count with the model's passage and query
/// prompts and specials (untruncated), and both vectors; with the time the vectors took.
func modelEmbed(folder path: String, textsFile: String) async throws -> [String: Any] {
    let folder = try ModelFolder(path: path)
    let model = try BERTEmbedder(folder: folder)
    let texts = lines(textsFile)
    let passageTokens = texts.map { model.tokenizer.encode(folder.passagePrefix + $0, maxLength: 1 << 20).count }
    let queryTokens = texts.map { model.tokenizer.encode(folder.queryPrefix + $0, maxLength: 1 << 20).count }
    _ = try await model.embed(["warm up"], role: .passage)
    let start = now()
    var passages: [[Float]] = []
    for batch in stride(from: 0, to: texts.count, by: 32) {
        passages += try await model.embed(Array(texts[batch..<min(batch + 32, texts.count)]), role: .passage)
    }
    let seconds = now() - start
    let queries = try await model.embed(texts, role: .query)
    return ["passage_tokens": passageTokens, "query_tokens": queryTokens, "passages": passages, "queries": queries,
            "passages_per_second": Double(texts.count) / seconds, "resident_mb": residentMB(), "peak_resident_mb": peakResidentMB(),
            "resident_anonymous_mb": residentMB("RssAnon"), "resident_file_mb": residentMB("RssFile")]
}
