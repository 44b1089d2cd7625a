public import Foundation
public import KBKit
import KBIngest
public import KBCore
import KBRequests

/// Small indexes several suites build on, made with the hashing embedder on the backend the suite
/// runs against (`TestBackend`).
public enum SampleIndexes {
    /// A sample index that could not be made.
    public struct SetupFailed: Error, CustomStringConvertible {
        public var what: String
        public var description: String { what }
    }

    /// Notes on Venus and Saturn (`astro/`) and bread (`cooking/`); the bots `astro` and `chef` over
    /// them; a memory each for the users ada and bob. Page pictures are kept under `root`.
    public static func astrology() async throws -> (root: URL, kb: KnowledgeBase) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kb-server-\(UUID().uuidString)")
        let notes = [
            "astro/venus.md": "---\ntags: [area:love]\n---\n# Venus\n\nVenus rules love, beauty and money. Venus in the tenth house favours the arts.",
            "astro/saturn.md": "---\ntags: [area:career]\n---\n# Saturn\n\nSaturn rules discipline, time and the long climb of a career.",
            "cooking/bread.md": "# Bread\n\nBread needs flour, water, salt and time. Knead the dough until it is smooth.",
        ]
        for (name, text) in notes {
            let url = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["KB_PAGE_CACHE_DIR"] = root.appendingPathComponent("page-cache").path   // page pictures kept with the test
        let kb = try KnowledgeBase.open(at: TestBackend.freshIndex(in: root), environment: environment)
        let (embedder, record) = try await kb.embedder(.hashing)
        _ = try await kb.ingest([root.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        for (name, prompt, folder) in [("astro", "You are an astrology tutor.", "astro"), ("chef", "You are a baker.", "cooking")] {
            var bot = BotRequest(name: name)
            bot.systemPrompt = prompt
            bot.sources = [root.path + "/\(folder)/"]
            _ = try await kb.createBot(bot, as: .admin)
        }
        _ = try await kb.remember(MemoryDraft("Ada has Venus in the tenth house and loves bread.", scope: try .user("ada")), as: .admin)
        _ = try await kb.remember(MemoryDraft("Bob has Saturn rising and hates bread.", scope: try .user("bob")), as: .admin)
        return (root, kb)
    }

    /// Eight notes whose first-stage order a stub re-ranker's relevance (`stubRelevance`)
    /// disagrees with: note n says "saturn" 8 − n times and "career" n times.
    public static func reranking(profile: RetrievalProfile = RetrievalProfile()) async throws -> (kb: KnowledgeBase, root: URL) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kb-rerank-\(UUID().uuidString)")
        let notes = root.appendingPathComponent("notes")
        try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
        for index in 0..<8 {
            let text = "# Note \(index)\n\n" + String(repeating: "saturn ", count: 8 - index) + "rules time. " + String(repeating: "career ", count: index)
            try text.write(to: notes.appendingPathComponent("n\(index).md"), atomically: true, encoding: .utf8)
        }
        let kb = try KnowledgeBase.open(at: TestBackend.freshIndex(in: root), profile: profile)
        let (embedder, record) = try await kb.embedder(.hashing)
        let report = try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        guard report.failed.isEmpty else { throw SetupFailed(what: "the reranking notes did not ingest: \(report.failed)") }
        return (kb, root)
    }
}
