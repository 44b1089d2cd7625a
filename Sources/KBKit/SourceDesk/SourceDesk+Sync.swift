import KBCore
import KBRequests
import KBStore

/// What a sync found: what the app should upload, what kb holds already, what it holds that the
/// app no longer lists (removed when the request said `prune`), and ids kb holds outside the
/// collection (never replaced or removed by a sync).
public struct SourcesSynced: Sendable, Hashable, Codable {
    public struct Entry: Sendable, Hashable, Codable {
        public var id: String
        /// `new` (kb lacks it), `changed` (other content), `retitled` (same content, another
        /// title); for a conflict, why the id is not the collection's to use.
        public var reason: String
    }

    public var collection: String
    /// Upload these (`POST /v1/sources` with the id and the collection).
    public var upload: [Entry]
    /// Held with the same content (and title): nothing to do.
    public var unchanged: [String]
    /// Held in the collection but not listed: removed when `pruned`, else left.
    public var gone: [String]
    /// Whether the `gone` sources were removed.
    public var pruned: Bool
    /// Listed ids that belong to a source outside the collection (or to another user's):
    /// uploading them would replace that source, so they are left for the app to rename.
    public var conflicts: [Entry]
}

extension SourceDesk {
    /// Compares an app's list of a collection with what kb holds (`SourceSyncRequest`). Uploads
    /// still being read count with the content they were sent with. Pruning needs a token that
    /// may write; a scoped token needs the right `sources` either way.
    func syncSources(_ checked: Checked<SourceSyncRequest>, as caller: Caller) async throws -> SourcesSynced {
        let request = checked.valid
        let prune = request.prune == true
        try caller.require(.sources, writing: prune, prune ? "prune sources" : "sync sources")
        let tag = SourceCollection.tag(request.collection)
        struct Held { var hash: String; var title: String; var owner: String?; var inCollection: Bool }
        let held = try await store.snapshot { snapshot -> [String: Held] in
            var held: [String: Held] = [:]
            for source in try snapshot.sources() {
                guard let id = Source.uploadID(path: source.path) else { continue }
                held[id] = Held(hash: source.contentHash, title: source.title, owner: source.owner, inCollection: source.tags.contains(tag))
            }
            // An acknowledged upload not read yet counts with what it was sent with.
            for job in Self.acknowledged(try snapshot.unfinishedJobs()) {
                held[job.job.source] = Held(hash: job.contentHash ?? "", title: job.title ?? "", owner: job.owner,
                                            inCollection: job.tags.contains(tag))
            }
            return held
        }
        var answer = SourcesSynced(collection: tag.value, upload: [], unchanged: [], gone: [], pruned: prune, conflicts: [])
        let mine = { (entry: Held) in entry.inCollection && entry.owner == request.user }
        for item in request.items {
            guard let entry = held[item.id] else {
                answer.upload.append(.init(id: item.id, reason: "new"))
                continue
            }
            guard mine(entry) else {
                let whose = entry.inCollection ? (entry.owner.map { "the user \($0)'s" } ?? "a shared source") : "outside the collection"
                answer.conflicts.append(.init(id: item.id, reason: "kb holds a source with this id \(whose); give the item another id"))
                continue
            }
            if entry.hash != item.sha256 {
                answer.upload.append(.init(id: item.id, reason: "changed"))
            } else if let title = item.title, title != entry.title {
                answer.upload.append(.init(id: item.id, reason: "retitled"))
            } else {
                answer.unchanged.append(item.id)
            }
        }
        let listed = Set(request.items.map(\.id))
        answer.gone = held.filter { mine($0.value) && !listed.contains($0.key) }.map(\.key).sorted()
        if prune, !answer.gone.isEmpty {
            let gone = Set(answer.gone)
            _ = try await store.removeSources(exactly: answer.gone.map(Source.uploadPath))
            let waiting = try await store.snapshot { try $0.unfinishedJobs() }.filter { gone.contains($0.job.source) }
            for job in waiting { try await store.discardJob(id: job.job.id) }
            try await store.scrub()
        }
        return answer
    }
}
