import Dispatch
import Foundation
public import KBCore
import KBStore
import NIOCore
import PostgresNIO

/// The keyword index of a PostgreSQL index, as tables:
///
/// - `keyword_terms`: per term, its directory (`KeywordDirectory`: each block's ids, count,
///   version and bound), and `keyword_blocks`: the blocks, a few hundred bytes each
///   (`KeywordCoding`), so that a ranking reads a term's best blocks, not one row per posting;
/// - `postings`: the *tail*, one row per posting of the snippets written since the blocks were
///   (their ids are above `keyword_merged_through`), read whole by every ranking beside the
///   blocks, so a write is ranked in the next request of every replica;
/// - `keyword_deleted`: postings in blocks whose snippets are gone, left out of rankings until
///   the blocks are rewritten.
///
/// The writer merges the tail and the deletions into the blocks once they outgrow
/// `tailLimit` postings (in the write that crosses it), and `kb index optimize` rewrites every
/// term's blocks. The statistics (`term_stats`, the snippet count and total length in `kb_meta`)
/// are exact at every commit, whatever is merged.
enum PostgresKeywordIndex {
    /// Tail or deleted postings beyond which a write merges them into the blocks.
    static let tailLimit = 100_000
    /// Above this many allowed snippets a filtered ranking walks the blocks; at or below, it
    /// looks its snippets up in them.
    static let lookupLimit = 4_096

    /// What a ranking reads first, in one statement: the statistics, each query term's document
    /// frequency and directory, the tail's postings of those terms and their deletions.
    struct Reading {
        var weighing = KeywordWeighing(n: 0, average: 1)
        /// In the query's order, without repeats.
        var terms: [(lexeme: String, df: Double, directory: KeywordDirectory?)] = []
        /// Per term (by lexeme): the tail's postings.
        var tail: [String: PostingBlock] = [:]
        /// Snippets whose postings in blocks are gone.
        var deleted = Set<Int64>()
        /// Set while `kb export` fills the index (its keyword index is not written yet).
        var bulkLoad: String?
    }

    static func read(lexemes: String, _ sql: inout SQL, _ session: PGSession) throws -> Reading {
        sql += """
            WITH q AS (SELECT lexeme, min(slot) AS slot FROM unnest(\(lexemes)) WITH ORDINALITY AS u(lexeme, slot) GROUP BY lexeme),
            st AS (\(PostgresSnapshot.keywordStatistics))
            SELECT 0 AS kind, q.slot, q.lexeme, coalesce(ts.snippets, 0)::float8 AS df, kt.directory,
                   NULL::bigint[] AS ids, NULL::real[] AS tfs, NULL::real[] AS lengths, NULL::float8 AS n, NULL::float8 AS average
            FROM q LEFT JOIN term_stats ts ON ts.lexeme = q.lexeme LEFT JOIN keyword_terms kt ON kt.lexeme = q.lexeme
            UNION ALL
            SELECT 1, 0, p.lexeme, 0, NULL, array_agg(p.snippet_id ORDER BY p.snippet_id), array_agg(p.tf ORDER BY p.snippet_id),
                   array_agg(sn.fts_length ORDER BY p.snippet_id), NULL, NULL
            FROM postings p JOIN snippets sn ON sn.id = p.snippet_id WHERE p.lexeme IN (SELECT lexeme FROM q) GROUP BY p.lexeme
            UNION ALL
            SELECT 2, 0, d.lexeme, 0, NULL, array_agg(d.snippet_id), NULL, NULL, NULL, NULL
            FROM keyword_deleted d WHERE d.lexeme IN (SELECT lexeme FROM q) GROUP BY d.lexeme
            UNION ALL
            SELECT 3, 0, (SELECT value FROM kb_meta WHERE key = 'keyword_bulk'), 0, NULL, NULL, NULL, NULL, st.n, st.average FROM st
            """
        var reading = Reading()
        var terms: [(slot: Int64, lexeme: String, df: Double, directory: KeywordDirectory?)] = []
        for row in try session.rows(sql) {
            switch try row.get(0, Int32.self) {
            case 0:
                let directory = try row.get(4, ByteBuffer?.self).map { buffer in
                    try buffer.withUnsafeReadableBytes { try KeywordCoding.decodeDirectory($0) }
                }
                terms.append((try row.get(1, Int64.self), try row.get(2, String.self), try row.get(3, Double.self), directory))
            case 1:
                let ids = try row.array(5, of: Int64.self), tfs = try row.array(6, of: Float.self), lengths = try row.array(7, of: Float.self)
                reading.tail[try row.get(2, String.self)] = PostingBlock(
                    ids: ids, frequencies: tfs.map { UInt32(($0 * 2).rounded()) }, lengths: lengths.map { UInt32(($0 * 2).rounded()) })
            case 2:
                reading.deleted.formUnion(try row.array(5, of: Int64.self))
            default:
                reading.bulkLoad = try row.get(2, String?.self)
                reading.weighing = KeywordWeighing(n: try row.get(8, Double?.self) ?? 0, average: try row.get(9, Double?.self) ?? 1)
            }
        }
        reading.terms = terms.sorted { $0.slot < $1.slot }.map { ($0.lexeme, $0.df, $0.directory) }
        return reading
    }

    /// Blocks by term and number, in the order asked.
    static func blocks(_ wanted: [(lexeme: String, block: Int)], _ session: PGSession) throws -> [PostingBlock] {
        var result = [PostingBlock?](repeating: nil, count: wanted.count)
        for start in stride(from: 0, to: wanted.count, by: 4_096) {
            let part = wanted[start..<min(start + 4_096, wanted.count)]
            let rows = try session.rows(prepared: """
                SELECT w.i, b.data FROM unnest($1::text[], $2::int4[]) WITH ORDINALITY AS w(lexeme, block, i)
                JOIN LATERAL (SELECT data FROM keyword_blocks b WHERE b.lexeme = w.lexeme AND b.block = w.block) b ON true
                """, .texts(part.map(\.lexeme)), .int32s(part.map { Int32($0.block) }))
            for row in rows {
                let index = start + Int(try row.get(0, Int64.self)) - 1
                result[index] = try row.get(1, ByteBuffer.self).withUnsafeReadableBytes { try KeywordCoding.decodeBlock($0) }
            }
        }
        return try result.map { block in
            guard let block else {
                throw KBError(.database, "A keyword block is missing from the index. Run `kb index optimize` to rebuild the keyword blocks.")
            }
            return block
        }
    }

    /// The ranking of `reading`'s terms: the best `limit` snippets `accept` lets through (every
    /// block read when `pruning` is off). `among`, when given (a few allowed snippets), is looked
    /// up in the blocks instead of walking them.
    static func rank(_ reading: Reading, limit: Int, among: Set<Int64>?, accept: (Int64) -> Bool, pruning: Bool,
                     cache: KeywordBlockCache?, _ session: PGSession) throws -> (ranking: [(id: Int64, score: Double)], counts: KeywordWalk.Counts) {
        let weighing = reading.weighing
        let present = reading.terms.filter { $0.df > 0 }
        var walk = KeywordWalk(terms: present.map { (weighing.idf($0.df), $0.directory) }, limit: limit, weighing: weighing)
        // The tail's snippets, each with its share of every term.
        var tail: [Int64: [Double]] = [:]
        for (slot, term) in present.enumerated() {
            guard let postings = reading.tail[term.lexeme] else { continue }
            let idf = weighing.idf(term.df)
            for i in postings.ids.indices where among?.contains(postings.ids[i]) ?? true {
                tail[postings.ids[i], default: [Double](repeating: 0, count: present.count)][slot] =
                    idf * weighing.share(halves: postings.frequencies[i], postings.lengths[i])
            }
        }
        let lexemeOfList = walk.lists.map { present[$0.slot].lexeme }, offsetOfList = walk.lists.map(\.offset)
        let versions = walk.lists.map { $0.entries.map(\.version) }
        // Blocks kept by this process at the versions the directories name; the others from the database.
        let fetch = { (wanted: [KeywordWalk.Wanted]) throws -> [PostingBlock] in
            let keys = wanted.map { KeywordBlockCache.Key(lexeme: lexemeOfList[$0.list], block: offsetOfList[$0.list] + $0.entry,
                                                          version: versions[$0.list][$0.entry]) }
            var found = keys.map { cache?.block($0) }
            let missing = found.indices.filter { found[$0] == nil }
            if !missing.isEmpty {
                let read = try blocks(missing.map { (keys[$0].lexeme, keys[$0].block) }, session)
                for (index, block) in zip(missing, read) {
                    found[index] = block
                    cache?.keep(keys[index], block)
                }
            }
            return found.map { $0! }
        }
        let tailed = tail.map { (id: $0.key, shares: $0.value) }
        let ranking: [(id: Int64, score: Double)]
        if let among {
            ranking = try walk.rank(among: among.sorted(), tail: tailed, accept: accept, fetch: fetch)
        } else {
            ranking = try walk.rank(tail: tailed, accept: accept, pruning: pruning, fetch: fetch)
        }
        return (ranking, walk.counts)
    }
}

// MARK: - Writing

extension PostgresKeywordIndex {
    /// Merges the tail and the deletions into the blocks when either has outgrown `tailLimit`.
    static func mergeIfDue(_ session: PGSession) throws {
        let counts = try session.rows("SELECT key, value FROM kb_meta WHERE key IN ('keyword_tail', 'keyword_deleted')")
            .reduce(into: [String: Int]()) { $0[try $1.get(0, String.self)] = Int(try $1.get(1, String.self)) ?? 0 }
        guard (counts["keyword_tail"] ?? 0) > tailLimit || (counts["keyword_deleted"] ?? 0) > tailLimit else { return }
        _ = try merge(session, rebuild: false)
    }

    /// Merges the tail and the deletions into the blocks, in the writer's transaction; with
    /// `rebuild`, every term's blocks are built anew (best postings chosen again at today's
    /// statistics, blocks full again), a few hundred terms at a time.
    static func merge(_ session: PGSession, rebuild: Bool) throws -> KeywordIndexReport {
        let started = Date()
        var report = KeywordIndexReport()
        let version = Int64(try session.value(String.self, """
            UPDATE kb_meta SET value = (value::bigint + 1)::text WHERE key = 'keyword_version' RETURNING value
            """) ?? "1") ?? 1
        let weighing = try statistics(session)
        var tail: [String: PostingBlock] = [:]
        for row in try session.rows("""
            SELECT p.lexeme, array_agg(p.snippet_id ORDER BY p.snippet_id), array_agg(p.tf ORDER BY p.snippet_id),
                   array_agg(sn.fts_length ORDER BY p.snippet_id)
            FROM postings p JOIN snippets sn ON sn.id = p.snippet_id GROUP BY p.lexeme
            """) {
            let tfs = try row.array(2, of: Float.self), lengths = try row.array(3, of: Float.self)
            tail[try row.get(0, String.self)] = PostingBlock(ids: try row.array(1, of: Int64.self), frequencies: tfs.map { UInt32(($0 * 2).rounded()) },
                                                             lengths: lengths.map { UInt32(($0 * 2).rounded()) })
        }
        var deleted: [String: Set<Int64>] = [:]
        for row in try session.rows("SELECT lexeme, array_agg(snippet_id) FROM keyword_deleted GROUP BY lexeme") {
            deleted[try row.get(0, String.self)] = Set(try row.array(1, of: Int64.self))
        }
        var lexemes = Set(tail.keys).union(deleted.keys)
        if rebuild { lexemes.formUnion(try session.rows("SELECT lexeme FROM keyword_terms").map { try $0.get(0, String.self) }) }
        let ordered = lexemes.sorted()
        for start in stride(from: 0, to: ordered.count, by: 512) {
            let part = Array(ordered[start..<min(start + 512, ordered.count)])
            try mergeTerms(part, tail: tail, deleted: deleted, rebuild: rebuild, weighing: weighing, version: version,
                           report: &report, session)
        }
        let merged = tail.values.reduce(0) { $0 + $1.count }
        report.merged = merged
        try session.execute("DELETE FROM postings")
        try session.execute("DELETE FROM keyword_deleted")
        try session.execute("""
            UPDATE kb_meta SET value = CASE key WHEN 'keyword_merged_through' THEN (SELECT coalesce(max(id), 0) FROM snippets)::text ELSE '0' END
            WHERE key IN ('keyword_merged_through', 'keyword_tail', 'keyword_deleted')
            """)
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    static func statistics(_ session: PGSession) throws -> KeywordWeighing {
        let row = try session.rows(PostgresSnapshot.keywordStatistics).first
        return KeywordWeighing(n: try row?.get(0, Double?.self) ?? 0, average: try row?.get(1, Double?.self) ?? 1)
    }

    /// Writes the blocks of some terms: the tail's postings appended after their last block (or
    /// all blocks built anew when that cannot be: a first block set, a term grown frequent enough
    /// to keep its best postings apart, ids out of order, or `rebuild`), deleted postings dropped
    /// from the blocks that hold them.
    private static func mergeTerms(_ lexemes: [String], tail: [String: PostingBlock], deleted: [String: Set<Int64>], rebuild: Bool,
                                   weighing: KeywordWeighing, version: Int64, report: inout KeywordIndexReport, _ session: PGSession) throws {
        var directories: [String: KeywordDirectory] = [:]
        for row in try session.rows("SELECT lexeme, directory FROM keyword_terms WHERE lexeme = ANY ($1)", .texts(lexemes)) {
            directories[try row.get(0, String.self)] = try row.get(1, ByteBuffer.self).withUnsafeReadableBytes { try KeywordCoding.decodeDirectory($0) }
        }
        // Which blocks each term needs read.
        var wanted: [(lexeme: String, block: Int)] = []
        var whole = Set<String>()
        for lexeme in lexemes {
            guard let directory = directories[lexeme] else { continue }
            let added = tail[lexeme] ?? PostingBlock(), gone = deleted[lexeme] ?? []
            let highest = directory.entries.reduce(Int64.min) { $1.count > 0 ? max($0, $1.last) : $0 }
            let untieredButFrequent = directory.tier == 0 && directory.postings + added.count >= 2 * KeywordDirectory.tieredFrom
            if rebuild || untieredButFrequent || (added.ids.first.map { $0 <= highest } ?? false) {
                whole.insert(lexeme)
                wanted += directory.entries.indices.map { (lexeme, $0) }
                continue
            }
            var blocks = Set<Int>()
            if !gone.isEmpty {
                if directory.tier == 1 { blocks.insert(0) }
                let list = KeywordWalk.List(slot: 0, idf: 0, offset: directory.tier, entries: Array(directory.entries[directory.tier...]))
                for id in gone { if let j = KeywordWalk.covering(id, in: list) { blocks.insert(directory.tier + j) } }
            }
            if !added.ids.isEmpty, directory.entries.count > directory.tier, let last = directory.entries.indices.last,
               directory.entries[last].count < KeywordDirectory.blockSize {
                blocks.insert(last)
            }
            wanted += blocks.sorted().map { (lexeme, $0) }
        }
        let read = try self.blocks(wanted, session)
        var held: [String: [Int: PostingBlock]] = [:]
        for (want, block) in zip(wanted, read) { held[want.lexeme, default: [:]][want.block] = block }

        var written: [(lexeme: String, block: Int, data: [UInt8])] = []
        var counts: [(lexeme: String, blocks: Int)] = []
        var newDirectories: [(lexeme: String, directory: KeywordDirectory)] = []
        for lexeme in lexemes {
            let added = tail[lexeme] ?? PostingBlock(), gone = deleted[lexeme] ?? []
            report.dropped += gone.count
            if let directory = directories[lexeme], !whole.contains(lexeme) {
                var directory = directory
                for (index, block) in (held[lexeme] ?? [:]).sorted(by: { $0.key < $1.key }) {
                    var kept = block.removing(gone)
                    let isLast = index == directory.entries.count - 1 && index >= directory.tier
                    if isLast, !added.ids.isEmpty {
                        // The last block filled up from the tail; the rest of the tail follows it.
                        let room = KeywordDirectory.blockSize - kept.count
                        for i in 0..<min(room, added.count) { kept.append(added.ids[i], added.frequencies[i], added.lengths[i]) }
                    }
                    if kept == block { continue }
                    var entry = BlockEntry(kept, version: version)
                    if kept.count == 0 { entry.first = directory.entries[index].first; entry.last = directory.entries[index].last }
                    directory.entries[index] = entry
                    written.append((lexeme, index, KeywordCoding.encode(kept)))
                }
                var rest = added
                if let last = directory.entries.indices.last, last >= directory.tier, let block = held[lexeme]?[last], !added.ids.isEmpty {
                    let used = min(KeywordDirectory.blockSize - block.removing(gone).count, added.count)
                    rest = PostingBlock(ids: Array(added.ids[used...]), frequencies: Array(added.frequencies[used...]), lengths: Array(added.lengths[used...]))
                }
                for block in KeywordDirectory.chunks(rest) {
                    written.append((lexeme, directory.entries.count, KeywordCoding.encode(block)))
                    directory.entries.append(BlockEntry(block, version: version))
                }
                newDirectories.append((lexeme, directory))
            } else {
                // All of the term's postings, built anew.
                var postings = PostingBlock()
                if let directory = directories[lexeme] {
                    var all: [(Int64, UInt32, UInt32)] = []
                    for index in directory.entries.indices {
                        guard let block = held[lexeme]?[index] else { continue }
                        for i in block.ids.indices where !gone.contains(block.ids[i]) { all.append((block.ids[i], block.frequencies[i], block.lengths[i])) }
                    }
                    for i in added.ids.indices { all.append((added.ids[i], added.frequencies[i], added.lengths[i])) }
                    all.sort { $0.0 < $1.0 }
                    for (id, frequency, length) in all { postings.append(id, frequency, length) }
                } else {
                    postings = added
                }
                let (directory, blocks) = KeywordDirectory.build(postings, weighing: weighing, version: version)
                for (index, block) in blocks.enumerated() { written.append((lexeme, index, KeywordCoding.encode(block))) }
                counts.append((lexeme, blocks.count))
                newDirectories.append((lexeme, directory))
            }
        }
        // Blocks past a rebuilt term's new end go; then the blocks and directories written.
        if !counts.isEmpty {
            try session.execute("""
                DELETE FROM keyword_blocks b USING unnest($1::text[], $2::int4[]) AS u(lexeme, blocks)
                WHERE b.lexeme = u.lexeme AND b.block >= u.blocks
                """, .texts(counts.map(\.lexeme)), .int32s(counts.map { Int32($0.blocks) }))
        }
        for start in stride(from: 0, to: written.count, by: 2_048) {
            let part = written[start..<min(start + 2_048, written.count)]
            try session.execute("""
                INSERT INTO keyword_blocks (lexeme, block, data) SELECT * FROM unnest($1::text[], $2::int4[], $3::bytea[])
                ON CONFLICT (lexeme, block) DO UPDATE SET data = excluded.data
                """, .texts(part.map(\.lexeme)), .int32s(part.map { Int32($0.block) }), .blobs(part.map(\.data)))
        }
        let emptied = newDirectories.filter { $0.directory.postings == 0 }.map(\.lexeme)
        if !emptied.isEmpty {
            try session.execute("DELETE FROM keyword_blocks WHERE lexeme = ANY ($1)", .texts(emptied))
            try session.execute("DELETE FROM keyword_terms WHERE lexeme = ANY ($1)", .texts(emptied))
        }
        let kept = newDirectories.filter { $0.directory.postings > 0 }
        for start in stride(from: 0, to: kept.count, by: 2_048) {
            let part = kept[start..<min(start + 2_048, kept.count)]
            try session.execute("""
                INSERT INTO keyword_terms (lexeme, directory) SELECT * FROM unnest($1::text[], $2::bytea[])
                ON CONFLICT (lexeme) DO UPDATE SET directory = excluded.directory
                """, .texts(part.map(\.lexeme)), .blobs(part.map { KeywordCoding.encode($0.directory) }))
        }
        report.terms += newDirectories.count
        report.blocks += written.count
    }
}

/// The keyword postings of a bulk load (`kb export` into PostgreSQL), gathered in memory while
/// the snippets are written without their tail rows, then written as blocks once, with the
/// statistics, by `finish`.
///
/// @unchecked Sendable: every use holds `lock`.
final class KeywordBulkLoad: @unchecked Sendable {
    private let lock = NSLock()
    private var postings: [String: PostingBlock] = [:]
    private var lengths: [Int64: UInt32] = [:]
    private var removed = Set<Int64>()

    /// One snippet's terms with their frequencies, and its length, in halves.
    func add(id: Int64, terms: [(term: String, frequency: UInt32)], length: UInt32) {
        lock.withLock {
            lengths[id] = length
            for (term, frequency) in terms { postings[term, default: PostingBlock()].append(id, frequency, length) }
        }
    }

    /// Snippets deleted again before the load ended.
    func remove(_ ids: [Int64]) {
        lock.withLock { for id in ids where lengths.removeValue(forKey: id) != nil { removed.insert(id) } }
    }

    /// Writes the blocks, directories and statistics of everything added, in one write
    /// transaction of the target.
    func finish(_ session: PGSession) throws -> KeywordIndexReport {
        let started = Date()
        let (postings, lengths, removed) = lock.withLock { (self.postings, self.lengths, self.removed) }
        let snippets = lengths.count
        let totalLength = lengths.values.reduce(0.0) { $0 + Double($1) * 0.5 }
        var report = KeywordIndexReport()
        try session.execute("""
            UPDATE kb_meta SET value = (value::float8 + CASE key WHEN 'fts_snippets' THEN $1 ELSE $2 END)::text
            WHERE key IN ('fts_snippets', 'fts_total_length')
            """, .double(Double(snippets)), .double(totalLength))
        let weighing = try PostgresKeywordIndex.statistics(session)
        let version = Int64(try session.value(String.self, """
            UPDATE kb_meta SET value = (value::bigint + 1)::text WHERE key = 'keyword_version' RETURNING value
            """) ?? "1") ?? 1
        var terms: [String] = [], frequencies: [Int64] = [], directories: [[UInt8]] = []
        var blockTerms: [String] = [], blockNumbers: [Int32] = [], blockData: [[UInt8]] = []
        func flushBlocks() throws {
            guard !blockTerms.isEmpty else { return }
            try session.execute("INSERT INTO keyword_blocks (lexeme, block, data) SELECT * FROM unnest($1::text[], $2::int4[], $3::bytea[])",
                                .texts(blockTerms), .int32s(blockNumbers), .blobs(blockData))
            blockTerms.removeAll(keepingCapacity: true)
            blockNumbers.removeAll(keepingCapacity: true)
            blockData.removeAll(keepingCapacity: true)
        }
        func flushTerms() throws {
            guard !terms.isEmpty else { return }
            try session.execute("""
                INSERT INTO term_stats (lexeme, snippets) SELECT * FROM unnest($1::text[], $2::int8[])
                ON CONFLICT (lexeme) DO UPDATE SET snippets = term_stats.snippets + excluded.snippets
                """, .texts(terms), .ints(frequencies))
            try session.execute("INSERT INTO keyword_terms (lexeme, directory) SELECT * FROM unnest($1::text[], $2::bytea[])",
                                .texts(terms), .blobs(directories))
            terms.removeAll(keepingCapacity: true)
            frequencies.removeAll(keepingCapacity: true)
            directories.removeAll(keepingCapacity: true)
        }
        // Every term's blocks built and encoded on every core (off Swift's cooperative pool: this
        // is one of the store's threads), then written.
        let all = Array(postings)
        let built = BuiltTerms(count: all.count)
        DispatchQueue.concurrentPerform(iterations: all.count) { i in
            let list = removed.isEmpty ? all[i].value : all[i].value.removing(removed)
            guard list.count > 0 else { return }
            let (directory, blocks) = KeywordDirectory.build(list, weighing: weighing, version: version)
            built.set(i, (list.count, KeywordCoding.encode(directory), blocks.map(KeywordCoding.encode)))
        }
        for (i, entry) in all.enumerated() {
            guard let (count, directory, blocks) = built.take(i) else { continue }
            terms.append(entry.key)
            frequencies.append(Int64(count))
            directories.append(directory)
            for (index, block) in blocks.enumerated() {
                blockTerms.append(entry.key)
                blockNumbers.append(Int32(index))
                blockData.append(block)
            }
            report.terms += 1
            report.blocks += blocks.count
            report.merged += count
            if blockTerms.count >= 8_192 { try flushBlocks() }
            if terms.count >= 8_192 { try flushTerms() }
        }
        try flushBlocks()
        try flushTerms()
        try session.execute("""
            UPDATE kb_meta SET value = (SELECT coalesce(max(id), 0) FROM snippets)::text WHERE key = 'keyword_merged_through'
            """)
        report.seconds = Date().timeIntervalSince(started)
        return report
    }
}

/// One keyword ranking with what it read (`PostgresStore.keywordWalk`): for benchmarks and
/// tests that hold the walk to the whole ranking.
public struct KeywordWalkReport: Sendable {
    public var ranking: [(id: Int64, score: Double)]
    /// Blocks and postings read, and the statements that read blocks.
    public var blocks: Int
    public var postings: Int
    public var batches: Int
    /// Passes over the blocks read (scoring them as far as they say).
    public var passes: Int
    public var seconds: Double
}

extension PostgresStore {
    /// The keyword ranking of `query` (its filters applied as a search applies them), with or
    /// without pruning, and what it read.
    public func keywordWalk(_ query: SearchQuery, limit: Int, pruning: Bool) async throws -> KeywordWalkReport {
        try await snapshot { snapshot in
            guard let snapshot = snapshot as? PostgresSnapshot else { throw KBError(.database, "Not a PostgreSQL snapshot.") }
            let allowed = try snapshot.filteredSnippetIDs(query)
            let excluded = allowed == nil ? try snapshot.hiddenSnippetIDs(user: query.user, everyUser: query.everyUser) : []
            let started = Date()
            let (ranking, counts) = try snapshot.keywordWalk(query, limit: limit, allowed: allowed, excluded: excluded, pruning: pruning, bitmaps: false)
            return KeywordWalkReport(ranking: ranking, blocks: counts.blocks, postings: counts.postings, batches: counts.batches,
                                     passes: counts.passes, seconds: Date().timeIntervalSince(started))
        }
    }
}

/// Keyword blocks this process has read, decoded, by term, number and version, so that the
/// blocks of a frequent question's words are read from the database once, not once a request.
/// A block's version changes whenever it is written again (`BlockEntry.version`), and every
/// ranking reads the directories it takes the versions from in its own snapshot, so a block
/// kept here is never one the database no longer holds. At most `capacity` bytes, in two
/// generations: the newer fills to half of it, then replaces the older (what the newer has not
/// taken again from the older goes).
///
/// @unchecked Sendable: `lock` guards the two generations.
final class KeywordBlockCache: @unchecked Sendable {
    struct Key: Hashable {
        var lexeme: String
        var block: Int
        var version: Int64
    }

    let capacity: Int
    private let lock = NSLock()
    private var newer: [Key: PostingBlock] = [:], older: [Key: PostingBlock] = [:]
    private var newerBytes = 0

    init(megabytes: Int) { capacity = max(0, megabytes) << 20 }

    static func bytes(_ block: PostingBlock) -> Int { 96 + block.count * 16 }

    func block(_ key: Key) -> PostingBlock? {
        guard capacity > 0 else { return nil }
        return lock.withLock {
            if let block = newer[key] { return block }
            guard let block = older.removeValue(forKey: key) else { return nil }
            keepLocked(key, block)
            return block
        }
    }

    func keep(_ key: Key, _ block: PostingBlock) {
        guard capacity > 0 else { return }
        lock.withLock { keepLocked(key, block) }
    }

    private func keepLocked(_ key: Key, _ block: PostingBlock) {
        if newer.updateValue(block, forKey: key) == nil { newerBytes += Self.bytes(block) }
        if newerBytes > capacity / 2 {
            older = newer
            newer = [:]
            newerBytes = 0
        }
    }
}

/// Terms' blocks built on several threads at once (`KeywordBulkLoad.finish`), one slot each.
///
/// @unchecked Sendable: each slot is written by one iteration of `concurrentPerform` and taken
/// after all have ended.
private final class BuiltTerms: @unchecked Sendable {
    typealias Built = (postings: Int, directory: [UInt8], blocks: [[UInt8]])
    private let slots: UnsafeMutableBufferPointer<Built?>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    func set(_ index: Int, _ value: Built) { slots[index] = value }

    func take(_ index: Int) -> Built? {
        defer { slots[index] = nil }
        return slots[index]
    }
}
