// Ingests a note with the local model, searches it, and builds a bot's prompt context: what a
// Swift chat app does with kb in-process. Exits non-zero if any step does not give what it should.
import Foundation
import KBCore
import KBIngest
import KBKit
import KBRequests

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("embed-kb-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let notes = folder.appendingPathComponent("notes")
try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
try """
    ---
    title: Saturn return
    tags: [planet:saturn]
    ---
    # Saturn return
    Around the age of 29 Saturn comes back to where it was at birth: a time of reckoning, when
    commitments made in one's twenties are tested and either deepen or fall away.
    """.write(to: notes.appendingPathComponent("saturn.md"), atomically: true, encoding: .utf8)

// 1. Open an index and ingest the folder with the local model.
let (kb, embedder, record) = try await KnowledgeBase.openForIngest(at: folder.appendingPathComponent("kb.sqlite").path, embedder: .local)
let report = try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
guard report.failed.isEmpty, report.added == 1 else { fatalError("ingest: \(report)") }
print("ingested \(report.added) note, \(report.snippets) snippet(s) with \(record.name)")

// 2. Search it (hybrid: keywords and vectors).
let results = try await kb.search(SearchQuery("when does Saturn come back?"), as: .admin)
guard let best = results.hits.first, best.sourceTitle == "Saturn return" else { fatalError("search: \(results)") }
print("search (\(results.mode.rawValue)): \(best.sourceTitle), score \(best.score)")

// 3. A bot over the notes, and the prompt context for one of its turns.
var bot = BotRequest(name: "astro")
bot.systemPrompt = "You are a careful astrology tutor."
bot.sources = [notes.path]
_ = try await kb.createBot(bot, as: .admin)
var turn = ContextRequest(bot: "astro", query: "What is a Saturn return?")
turn.budget = 400
let context = try await kb.context(turn, as: .admin)
guard context.citations.first?.title == "Saturn return", context.tokens <= 400 else { fatalError("context: \(context)") }
print("context: \(context.tokens) tokens, \(context.citations.count) citation(s)")
print(context.context)

// 4. This build has no OCR (no optional traits): a scan fails with a message that says so, and
//    the index keeps what it had.
try Data("\u{89}PNG\r\n\u{1A}\n".utf8).write(to: notes.appendingPathComponent("scan.png"))
let scans = try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
guard scans.failed.count == 1, scans.failed[0].message.contains("without OCR"), scans.unchanged == 1 else { fatalError("scan: \(scans)") }
print("scan: \(scans.failed[0].message)")
