import Foundation
import KBCore
import KBStore
import Testing

/// The store contract (`IndexStore` and `IndexSnapshot`), checked rule by rule on every engine
/// this run has: what KBKit relies on of any store, whatever its SQL. An engine that breaks a
/// rule fails here by name, before any test of what kb builds on it.
@Suite struct StoreConformanceTests {
    static let vectors = EmbedderRecord(name: "test-vectors", dimension: 3, spec: "test-vectors")

    /// A search of memories only (knowledge searches leave them out).
    static func memories(_ text: String) -> SearchQuery {
        var query = SearchQuery(text)
        query.kinds = [.memory]
        return query
    }

    // MARK: Opening

    @Test(arguments: ContractEngine.all)
    func aMissingIndexIsNotMadeUnlessAsked(engine: ContractEngine) async throws {
        let location = engine.freshLocation()
        let error = await #expect(throws: KBError.self) {
            let store = try engine.open(location, create: false)
            _ = try await store.status()
        }
        #expect(error?.code == .noIndex)
        // Nothing was made on the way: asking again is the same answer.
        let again = await #expect(throws: KBError.self) { _ = try await engine.open(location, create: false).status() }
        #expect(again?.code == .noIndex)
        let made = try engine.open(location, create: true)
        #expect(try await made.status().sources == 0)
        #expect(try await engine.open(location, create: false).status().sources == 0)
    }

    // MARK: Sources and snippets

    @Test(arguments: ContractEngine.all)
    func aStoredSourceIsReadBackWithItsSnippetsVectorsAndHash(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        let document = contractDocument("/notes/venus.md", title: "Venus", tags: ["planet:venus"], snippets: ["Venus rules love.", "And money."], hash: "h-venus")
        let before = try await store.snapshot { try $0.generation() }
        let effect = try await store.replace(document, vectors: [[1, 0, 0], [0, 1, 0]], embedder: Self.vectors)
        #expect(effect.insertedSnippets.count == 2 && effect.removedSnippets.isEmpty && effect.generation > before)
        let (read, hashes, vectors, status) = try await store.snapshot { snapshot in
            (try snapshot.document(path: "/notes/venus.md"), try snapshot.contentHashes(),
             try snapshot.vectors(of: effect.insertedSnippets, embedder: Self.vectors), try snapshot.status())
        }
        #expect(read?.source.title == "Venus" && read?.source.tags == ["planet:venus"])
        #expect(read?.snippets.map(\.text) == ["Venus rules love.", "And money."])
        #expect(read?.snippets.map(\.headingPath) == [["H", "Sub 0"], ["H", "Sub 1"]])
        #expect(hashes == ["/notes/venus.md": "h-venus"])
        #expect(vectors[effect.insertedSnippets[0]] == [1, 0, 0] && vectors[effect.insertedSnippets[1]] == [0, 1, 0])
        #expect(status.sources == 1 && status.snippets == 2 && status.embedder?.name == "test-vectors")
    }

    @Test(arguments: ContractEngine.all)
    func replacingASourceReplacesItsSnippetsInSearch(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        let first = try await store.replace(contractDocument("/a.md", snippets: ["old words"]))
        let second = try await store.replace(contractDocument("/a.md", snippets: ["new words"], hash: "h2"))
        #expect(second.removedSnippets == first.insertedSnippets && second.generation > first.generation)
        #expect(try await store.keywordSearch(SearchQuery("old")).isEmpty)
        #expect(try await store.keywordSearch(SearchQuery("new")).count == 1)
        #expect(try await store.status().snippets == 1)
    }

    @Test(arguments: ContractEngine.all)
    func aBatchIsStoredWholeOrNotAtAll(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        try await store.replace(contractDocument("/a.md", snippets: ["original text"]), vectors: [[1, 0, 0]], embedder: Self.vectors)
        let good = contractDocument("/a.md", snippets: ["replacement"], hash: "h2")
        let bad = contractDocument("/b.md", snippets: ["one", "two"])
        await #expect(throws: KBError.self) {
            // The second source has one vector for two snippets.
            try await store.replace([(good, [[0, 1, 0]]), (bad, [[0, 0, 1]])], embedder: Self.vectors, ingestedAt: Date())
        }
        #expect(try await store.paths() == ["/a.md"])
        #expect(try await store.keywordSearch(SearchQuery("original")).count == 1)
        #expect(try await store.keywordSearch(SearchQuery("replacement")).isEmpty)
        #expect(try await store.snapshot { try $0.contentHashes() } == ["/a.md": "h"])
    }

    @Test(arguments: ContractEngine.all)
    func sourcesAreRemovedByFolderOrByExactPath(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        try await store.replace(contractDocument("/dir/a.md", tags: ["x"], snippets: ["alpha"]))
        try await store.replace(contractDocument("/dir/sub/b.md", snippets: ["alpha"]))
        try await store.replace(contractDocument("/dirty.md", snippets: ["alpha"]))
        try await store.replace(contractDocument("/keep.md", snippets: ["alpha"]))
        let removed = try await store.removeSources(matching: ["/dir"])
        #expect(Set(removed.paths) == ["/dir/a.md", "/dir/sub/b.md"] && removed.effect.removedSnippets.count == 2)
        #expect(try await store.keywordSearch(SearchQuery("alpha")).map(\.sourcePath).sorted() == ["/dirty.md", "/keep.md"])
        #expect(try await store.status().tags == 0)   // the tag only /dir/a.md had is gone with it
        // Exactly: a path names one source, never a folder's.
        #expect(try await store.removeSources(exactly: ["/dirt", "/keep.md"]).count == 1)
        #expect(try await store.paths() == ["/dirty.md"])
        #expect(try await store.removeSources(exactly: ["/nothing.md"]).count == 0)
    }

    // MARK: Keyword search

    @Test(arguments: ContractEngine.all)
    func keywordSearchFindsStoredSnippetsWithTheirMetadata(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        try await store.replace(contractDocument("/a.md", title: "Venus", tags: ["planet:venus"], snippets: ["Venus rules love and money.", "Nothing here."]))
        let hits = try await store.keywordSearch(SearchQuery("money"))
        let hit = try #require(hits.first)
        #expect(hits.count == 1)
        #expect(hit.sourceTitle == "Venus" && hit.sourcePath == "/a.md")
        #expect(hit.snippet.headingPath == ["H", "Sub 0"] && hit.snippet.tags == ["planet:venus"])
        #expect(hit.excerpt.contains("**money**"))
        #expect(hit.rank == 1 && hit.score > 0)
    }

    @Test(arguments: ContractEngine.all)
    func titlesHeadingsAndKeywordsAreSearchable(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        var document = contractDocument("/a.md", title: "Saturn Return", snippets: ["Discipline."])
        document.source.keywords = ["alias: Kronos"]
        try await store.replace(document)
        for word in ["saturn", "kronos", "sub", "discipline"] {
            #expect(try await store.keywordSearch(SearchQuery(word)).count == 1, "\(word)")
        }
    }

    @Test(arguments: ContractEngine.all)
    func hostileQueriesAreSearchedAsPlainWords(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        try await store.replace(contractDocument("/a.md", snippets: ["Venus and love near the drop table or not."]))
        for query in ["\"venus unbalanced", "venus*", "-venus", "title:venus", "(venus", "NEAR(venus love)", "venus AND", "OR",
                      "^venus", "'; DROP TABLE snippets; --", "{venus}", "venus + love", "💫 venus", "venus & love | !x", "venus:*"] {
            #expect(try await store.keywordSearch(SearchQuery(query)).count == 1, "\(query)")
        }
        #expect(try await store.status().snippets == 1)
        let error = await #expect(throws: KBError.self) { try await store.keywordSearch(SearchQuery("*** ()")) }
        #expect(error?.code == .unprocessable)
    }

    @Test(arguments: ContractEngine.all)
    func filtersApplyBeforeTheLimit(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        // 30 strongly matching snippets without the tag, 12 weakly matching ones with it.
        let strong = (0..<30).map { (contractDocument("/other/\($0).md", snippets: ["venus venus venus venus \($0)"]), [[Float]]?.none) }
        let tagged = (0..<12).map {
            (contractDocument("/career/\($0).md", kind: .pdf, snippets: ["venus and a long text about work and ambition number \($0)"],
                              snippetTags: [["area:career", "b"]]), [[Float]]?.none)
        }
        _ = try await store.replace(strong + tagged, embedder: .none, ingestedAt: Date())
        var query = SearchQuery("venus")
        query.limit = 10
        query.tags = ["area:career"]
        var hits = try await store.keywordSearch(query)
        #expect(hits.count == 10 && hits.allSatisfy { $0.snippet.tags.contains("area:career") })
        query.tags = ["area:career", "missing"]   // every tag must match
        #expect(try await store.keywordSearch(query).isEmpty)
        query.tags = []
        query.kinds = [.pdf]
        hits = try await store.keywordSearch(query)
        #expect(hits.count == 10 && hits.allSatisfy { $0.sourcePath.hasPrefix("/career/") })
        query.kinds = []
        query.sourcePrefixes = ["/other/"]
        hits = try await store.keywordSearch(query)
        #expect(hits.count == 10 && hits.allSatisfy { $0.sourcePath.hasPrefix("/other/") })
        // The filtered ids are what the filters let through, and ranking among them agrees.
        let filtered = query
        let (allowed, among) = try await store.snapshot { snapshot in
            let allowed = try snapshot.filteredSnippetIDs(filtered)
            return (allowed, try snapshot.keywordRanking(filtered, limit: 100, allowed: allowed))
        }
        #expect(allowed?.count == 30 && among.count == 30 && among.allSatisfy { allowed?.contains($0.id) == true })
        #expect(zip(among, among.dropFirst()).allSatisfy { $0.score >= $1.score })
    }

    /// A question with a word most snippets hold ranks as its whole ranking does, whatever the
    /// limit: a store may rank by the rarer words first (PostgreSQL does, once a word is in more
    /// than an eighth of the snippets), but the common word's share still counts — here it alone
    /// orders the snippets the rare word ties, and a snippet with the common word only never
    /// rises above them.
    @Test(arguments: ContractEngine.all)
    func aCommonWordsShareCountsWhateverTheLimit(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        var documents: [(SourceDocument, [[Float]]?)] = []
        // Five snippets with the rare word, alike in length, the common word 4, 1, 3, 0 and 2 times.
        for (i, times) in [4, 1, 3, 0, 2].enumerated() {
            let words = ["zephyr"] + Array(repeating: "common", count: times) + Array(repeating: "filler", count: 4 - times)
            documents.append((contractDocument("/rare/\(i).md", snippets: [words.joined(separator: " ")]), nil))
        }
        for i in 0..<35 { documents.append((contractDocument("/common/\(i).md", snippets: ["common common common text number \(i)"]), nil)) }
        _ = try await store.replace(documents, embedder: .none, ingestedAt: Date())
        let query = SearchQuery("zephyr common")
        let (all, top) = try await store.snapshot { snapshot in
            (try snapshot.keywordRanking(query, limit: 100, allowed: nil), try snapshot.keywordRanking(query, limit: 3, allowed: nil))
        }
        #expect(all.count == 40)
        #expect(top.map(\.id) == Array(all.prefix(3).map(\.id)))
        #expect(zip(top, all).allSatisfy { abs($0.score - $1.score) < 1e-9 })
        // The rare word's snippets first, ordered by how often the common word comes.
        let paths = try await store.keywordSearch({ var q = query; q.limit = 5; return q }()).map(\.sourcePath)
        #expect(paths == ["/rare/0.md", "/rare/2.md", "/rare/4.md", "/rare/1.md", "/rare/3.md"])
    }

    // MARK: Vectors

    @Test(arguments: ContractEngine.all)
    func vectorRankingIsNearestFirstWithinWhatIsAllowed(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        let effect = try await store.replace(contractDocument("/a.md", snippets: ["x", "xy", "y", "z"]),
                                             vectors: [[1, 0, 0], [0.7, 0.7, 0], [0, 1, 0], [0, 0, 1]], embedder: Self.vectors)
        let ids = effect.insertedSnippets
        let (all, allowed, excluded) = try await store.snapshot { snapshot in
            (try snapshot.vectorRanking([1, 0.1, 0], embedder: Self.vectors, k: 3, allowed: nil, excluded: [], quantized: false),
             try snapshot.vectorRanking([1, 0.1, 0], embedder: Self.vectors, k: 3, allowed: [ids[2], ids[3]], excluded: [], quantized: false),
             try snapshot.vectorRanking([1, 0.1, 0], embedder: Self.vectors, k: 3, allowed: nil, excluded: [ids[0]], quantized: false))
        }
        #expect(all.map(\.id) == [ids[0], ids[1], ids[2]])
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.score >= $1.score })
        #expect(allowed.map(\.id) == [ids[2], ids[3]])
        #expect(excluded.map(\.id) == [ids[1], ids[2], ids[3]])
    }

    /// A candidate set too long to send as ids (a bot's sources over most of a shelf, or the many
    /// private snippets a search leaves out) ranks as its ids do, whichever form the store uses.
    @Test(arguments: ContractEngine.all)
    func aLongCandidateSetRanksAsItsIdsDo(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        let count = 2_100
        let texts = (0..<count).map { "passage \($0)" }
        let angle = { (i: Int) -> [Float] in
            let a = Float(i) * 0.0137
            return [cos(a), sin(a), Float(i % 7) * 0.01]
        }
        _ = try await store.replace(contractDocument("/shelf/a.md", snippets: texts), vectors: (0..<count).map(angle), embedder: Self.vectors)
        _ = try await store.replace(contractDocument("/other/b.md", snippets: ["near", "far"]), vectors: [[1, 0, 0], [0, 0, 1]],
                                    embedder: Self.vectors)
        var secret = contractDocument("/private/c.md", snippets: texts)
        secret.source.owner = "alice"
        _ = try await store.replace(secret, vectors: (0..<count).map { angle($0 + 3) }, embedder: Self.vectors)
        var others = contractDocument("/private/d.md", snippets: texts)
        others.source.owner = "bob"
        _ = try await store.replace(others, vectors: (0..<count).map { angle($0 + 5) }, embedder: Self.vectors)
        var shelfOnly = SearchQuery("passage")
        shelfOnly.sourcePrefixes = ["/shelf/"]
        let filtered = shelfOnly
        let query: [Float] = [0.8, 0.6, 0]
        let (byFilter, byFilterIDs, hidden, hiddenIDs, alice, aliceIDs) = try await store.snapshot { snapshot in
            let allowed = try snapshot.filteredSnippetIDs(filtered)
            let excluded = try snapshot.hiddenSnippetIDs(user: nil)
            let rank = { (candidates: VectorCandidates) in
                try snapshot.vectorRankingWork(query, embedder: Self.vectors, k: 10, candidates: candidates, quantized: false, rows: .knowledge)()
            }
            return (try rank(VectorCandidates(allowed: allowed, excluded: [], filters: filtered, user: nil)),
                    try snapshot.vectorRanking(query, embedder: Self.vectors, k: 10, allowed: allowed, excluded: [], quantized: false),
                    try rank(VectorCandidates(allowed: nil, excluded: excluded, filters: nil, user: nil)),
                    try snapshot.vectorRanking(query, embedder: Self.vectors, k: 10, allowed: nil, excluded: excluded, quantized: false),
                    try rank(VectorCandidates(allowed: nil, excluded: try snapshot.hiddenSnippetIDs(user: "alice"), filters: nil, user: "alice")),
                    try snapshot.vectorRanking(query, embedder: Self.vectors, k: 10, allowed: nil,
                                               excluded: try snapshot.hiddenSnippetIDs(user: "alice"), quantized: false))
        }
        #expect(byFilter.count == 10 && byFilter.map(\.id) == byFilterIDs.map(\.id))
        #expect(hidden.count == 10 && hidden.map(\.id) == hiddenIDs.map(\.id))
        #expect(alice.count == 10 && alice.map(\.id) == aliceIDs.map(\.id))
        // The private source is nearer to the query than the shelf; only its owner sees it.
        let paths = try await store.snapshot { try $0.snippetSummaries(hidden.map(\.id) + alice.map(\.id), texts: false) }
        #expect(hidden.allSatisfy { paths[$0.id]?.sourcePath.hasPrefix("/private/") == false })
        #expect(alice.contains { paths[$0.id]?.sourcePath == "/private/c.md" })
        #expect(alice.allSatisfy { paths[$0.id]?.sourcePath != "/private/d.md" })
    }

    @Test(arguments: ContractEngine.all)
    func anotherEmbedderIsSearchedOnlyOnceEverySnippetHasItsVector(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        let ids = try await store.replace(contractDocument("/a.md", snippets: ["one", "two"]), vectors: [[1, 0, 0], [0, 1, 0]],
                                          embedder: Self.vectors).insertedSnippets
        let next = EmbedderRecord(name: "next-vectors", dimension: 2, spec: "next-vectors")
        await #expect(throws: KBError.self) { try await store.addVectors(embedder: next, [(ids[0], [1, 0, 0])]) }   // wrong dimension
        try await store.addVectors(embedder: next, [(ids[0], [1, 0])])
        #expect(try await store.switchEmbedder(to: next, dropOthers: true) == false)
        #expect(try await store.snapshot { try $0.snippetsWithoutVectors(embedder: next, limit: 10).map(\.id) } == [ids[1]])
        try await store.addVectors(embedder: next, [(ids[1], [0, 1])])
        #expect(try await store.switchEmbedder(to: next, dropOthers: true))
        let (record, old) = try await store.snapshot { (try $0.embedderRecord(), try $0.vectors(of: ids, embedder: Self.vectors)) }
        #expect(record?.name == "next-vectors" && old.isEmpty)
    }

    @Test func keywordCoverageWeighsEachWordByItsRarity() {
        // 100 snippets: "fortune" in 2, "leaves" in 40, "wealthy" in none.
        let terms = [KeywordCoverage.Term(term: "wealthy", documentFrequency: 0, held: false),
                     KeywordCoverage.Term(term: "leaves", documentFrequency: 40, held: true),
                     KeywordCoverage.Term(term: "fortune", documentFrequency: 2, held: false)]
        let idf = { (df: Double) in log(1 + (100 - df + 0.5) / (df + 0.5)) }
        let share = KeywordCoverage(terms: terms, snippets: 100).share
        #expect(abs(share - idf(40) / (idf(0) + idf(40) + idf(2))) < 1e-12 && share < 0.15)
        var all = terms
        for index in all.indices { all[index].held = true }
        #expect(KeywordCoverage(terms: all, snippets: 100).share == 1)
        #expect(KeywordCoverage(terms: [], snippets: 100).share == 1)
    }

    /// Both engines say alike how much of a question a snippet holds, from the same statistics
    /// their keyword rankings read.
    @Test(arguments: ContractEngine.all)
    func aSnippetsKeywordCoverageCountsTheQuestionsWordsByRarity(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        _ = try await store.replace(contractDocument("/a.md", title: "Notes", snippets: ["the fortune of jupiter", "saturn leaves slowly", "saturn returns", "mars leaves"]),
                                    vectors: nil, embedder: .none)
        let query = SearchQuery("wealthy fortune leaves")
        let (ranking, coverages) = try await store.snapshot { snapshot in
            let ranking = try snapshot.keywordRanking(query, limit: 10, allowed: nil)
            return (ranking, try snapshot.keywordCoverage(query, of: ranking.map(\.id)))
        }
        #expect(ranking.count == 3 && coverages.count == 3)
        let coverage = coverages[0]
        #expect(coverage.snippets == 4)
        #expect(coverage.terms.map(\.documentFrequency) == [0, 1, 2])
        #expect(coverage.terms.map(\.held) == [false, true, false])
        let idf = { (df: Double) in log(1 + (4 - df + 0.5) / (df + 0.5)) }
        #expect(abs(coverage.share - idf(1) / (idf(0) + idf(1) + idf(2))) < 1e-12)
        #expect(coverages[2].terms.map(\.held) == [false, false, true])
        #expect(try await store.snapshot { try $0.keywordCoverage(SearchQuery("the of"), of: [ranking[0].id]) }.first?.terms.isEmpty == false)
        #expect(try await store.snapshot { try $0.keywordCoverage(query, of: []) }.isEmpty)
    }

    /// `kb reindex` to the index's own embedder in another precision: the new vectors wait under
    /// `staging` until complete, then replace the searched ones under the same name.
    @Test(arguments: ContractEngine.all)
    func theSameEmbedderInAnotherPrecisionReplacesItsVectorsOnlyWhenComplete(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        let bf16 = EmbedderRecord(name: "test-vectors", dimension: 3, spec: "local:test-vectors", precision: "bf16")
        let ids = try await store.replace(contractDocument("/a.md", snippets: ["one", "two"]), vectors: [[1, 0, 0], [0, 1, 0]],
                                          embedder: bf16).insertedSnippets
        let int8 = EmbedderRecord(name: "test-vectors", dimension: 3, spec: "local:test-vectors", precision: "int8", context: "title")
        #expect(!bf16.embedsLike(int8) && int8.staging.name != int8.name)
        try await store.addVectors(embedder: int8.staging, [(ids[0], [0, 0, 1])])
        #expect(try await store.switchEmbedder(to: int8, staged: true, dropOthers: false) == false)
        #expect(try await store.snapshot { try $0.embedderRecord() } == bf16)
        #expect(try await store.snapshot { try $0.snippetsWithoutVectors(embedder: int8.staging, limit: 10).map(\.id) } == [ids[1]])
        try await store.addVectors(embedder: int8.staging, [(ids[1], [0, 0.6, 0.8])])
        #expect(try await store.switchEmbedder(to: int8, staged: true, dropOthers: false))
        let (record, vectors, status) = try await store.snapshot {
            (try $0.embedderRecord(), try $0.vectors(of: ids, embedder: int8), try $0.status())
        }
        #expect(record == int8)
        #expect(vectors[ids[0]] == [0, 0, 1] && vectors[ids[1]] == [0, 0.6, 0.8])
        #expect(status.vectors == ["test-vectors": 2])
        let hits = try await store.snapshot { try $0.vectorRanking([0, 0, 1], embedder: int8, k: 2, allowed: nil, excluded: [], quantized: false) }
        #expect(hits.first?.id == ids[0])
    }

    @Test(arguments: ContractEngine.all)
    func theIndexKeepsThePrecisionItsPassagesWereEmbeddedInUntilItSwitchesEmbedder(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        let local = EmbedderRecord(name: "test-vectors", dimension: 3, spec: "local:test-vectors", precision: "int8")
        let ids = try await store.replace(contractDocument("/a.md", snippets: ["one"]), vectors: [[1, 0, 0]], embedder: local).insertedSnippets
        #expect(try await store.snapshot { try $0.embedderRecord() } == local)
        #expect(try await store.snapshot { try $0.embedderRecord()?.passagePrecision } == .int8)
        // A later write in another precision (an explicit --precision) leaves the record alone.
        var bf16 = local
        bf16.precision = "bf16"
        _ = try await store.replace(contractDocument("/b.md", snippets: ["two"]), vectors: [[0, 1, 0]], embedder: bf16)
        #expect(try await store.snapshot { try $0.embedderRecord()?.precision } == "int8")
        // A switch to an embedder without a precision clears it.
        let remote = EmbedderRecord(name: "remote", dimension: 2, spec: "openai:remote@http://127.0.0.1:1/v1")
        let all = try await store.snapshot { try $0.snippetsWithoutVectors(embedder: remote, limit: 10).map(\.id) }
        #expect(all.count == 2 && all.contains(ids[0]))
        try await store.addVectors(embedder: remote, all.map { ($0, [1, 0]) })
        #expect(try await store.switchEmbedder(to: remote, dropOthers: false))
        let switched = try await store.snapshot { try $0.embedderRecord() }
        #expect(switched == remote && switched?.precision == nil && switched?.passagePrecision == nil)
    }

    @Test(arguments: ContractEngine.all)
    func aLocalIndexThatRecordedNoPrecisionIsTakenForBF16(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        let legacy = EmbedderRecord(name: "test-vectors", dimension: 3, spec: "local:test-vectors")
        _ = try await store.replace(contractDocument("/a.md", snippets: ["one"]), vectors: [[1, 0, 0]], embedder: legacy)
        let record = try await store.snapshot { try $0.embedderRecord() }
        #expect(record?.precision == nil && record?.passagePrecision == .bf16)
        // Another embedder's index has no precision of the local model's.
        let other = try engine.fresh()
        _ = try await other.replace(contractDocument("/a.md", snippets: ["one"]), vectors: [[1, 0, 0]], embedder: Self.vectors)
        #expect(try await other.snapshot { try $0.embedderRecord()?.passagePrecision } == nil)
    }

    @Test(arguments: ContractEngine.all)
    func cachedVectorsAreFoundByTheirTextsHash(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        let remote = EmbedderRecord(name: "openai:test", dimension: 3, spec: "openai:test")
        let hash = Data((0..<32).map { UInt8($0) }), other = Data(repeating: 7, count: 32)
        try await store.cacheVectors(embedder: remote, [(hash, [0.5, 0.25, 0])], tokens: 12)
        let found = try await store.snapshot { try $0.cachedVectors(embedder: remote, hashes: [hash, other]) }
        #expect(found == [hash: [0.5, 0.25, 0]])
        #expect(try await store.status().tokensUsed["openai:test"] == 12)
    }

    // MARK: Meta

    @Test(arguments: ContractEngine.all)
    func metaUpdatesAreReadAndWrittenInOneTransaction(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        try await store.setMeta("counter", "0")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 {
                group.addTask { _ = try await store.updateMeta("counter") { (String(Int($0 ?? "0")! + 1), ()) } }
            }
            try await group.waitForAll()
        }
        #expect(try await store.snapshot { try $0.meta("counter") } == "16")
        // What the change throws is what the caller gets (kb's own errors as they are), and nothing is written.
        let refused = await #expect(throws: KBError.self) {
            try await store.updateMeta("counter") { _ -> (value: String, result: Void) in throw KBError(.conflict, "no") }
        }
        #expect(refused?.code == .conflict)
        #expect(try await store.snapshot { try $0.meta("counter") } == "16")
    }

    // MARK: Memories

    @Test(arguments: ContractEngine.all)
    func aMemoryIsStoredOncePerScopeAndVersionedOnChange(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        guard case .added = try await store.addMemory(try contractMemory("m1", scope: "user:ana", content: "Ana likes  tea.")) else {
            Issue.record("the first memory was not added"); return
        }
        // The same content (whitespace aside) in the same scope is the existing memory.
        guard case .existing(let existing) = try await store.addMemory(try contractMemory("m2", scope: "user:ana", content: "Ana likes tea.")) else {
            Issue.record("a duplicate was added"); return
        }
        #expect(existing.id == "m1")
        guard case .added = try await store.addMemory(try contractMemory("m3", scope: "user:bob", content: "Ana likes tea.")) else {
            Issue.record("another scope's memory was not added"); return
        }
        var changed = try contractMemory("m1", scope: "user:ana", content: "Ana likes green tea.")
        changed.memory.version = 2
        let stale = await #expect(throws: KBError.self) { try await store.updateMemory(changed, expectedVersion: 7) }
        #expect(stale?.code == .conflict)
        _ = try await store.updateMemory(changed, expectedVersion: 1)
        let (memory, history, found) = try await store.snapshot { snapshot in
            (try snapshot.memory("m1"), try snapshot.memoryHistory("m1"), try snapshot.keywordSearch(Self.memories("green")).map(\.sourcePath))
        }
        #expect(memory.content == "Ana likes green tea." && memory.version == 2)
        #expect(history.map(\.content).contains("Ana likes  tea."))
        #expect(found == ["memory:m1"])
        let scoped = try await store.snapshot { try $0.memories(scopes: [try MemoryScope("user:ana")]) }
        #expect(scoped.map(\.id) == ["m1"])
    }

    @Test(arguments: ContractEngine.all)
    func aRefusedDeleteLeavesTheMemoryAndErasureTakesOneScopeWhole(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        for (id, scope) in [("a1", "user:ana"), ("a2", "user:ana"), ("b1", "user:bob")] {
            _ = try await store.addMemory(try contractMemory(id, scope: scope, content: "memory \(id)", vector: [1, 0, 0], embedder: Self.vectors))
        }
        let refused = await #expect(throws: KBError.self) { try await store.deleteMemory("a1") { _ in throw KBError(.forbidden, "not yours") } }
        #expect(refused?.code == .forbidden)
        #expect(try await store.snapshot { try $0.fetchMemory(id: "a1") } != nil)
        let deleted = try await store.deleteMemory("a1") { _ in }
        #expect(deleted.memory.id == "a1")
        #expect(try await store.snapshot { try $0.fetchMemory(id: "a1") } == nil)
        _ = try await store.eraseMemories(scope: try MemoryScope("user:ana")) { Data($0.utf8) }
        let left = try await store.snapshot { try $0.memories(scopes: [], tags: [], includeSuperseded: true).map(\.id) }
        #expect(left == ["b1"])
        #expect(try await store.keywordSearch(Self.memories("a2")).isEmpty)
        #expect(try await store.keywordSearch(Self.memories("b1")).count == 1)
    }

    // MARK: Bots

    @Test(arguments: ContractEngine.all)
    func botsAreUniqueByNameAndChangedInPlace(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        try await store.createBot(Bot(name: "tutor", systemPrompt: "Teach.", sources: [.tag("area:career")]))
        let twice = await #expect(throws: KBError.self) { try await store.createBot(Bot(name: "tutor", systemPrompt: "Again.")) }
        #expect(twice?.code == .conflict)
        let updated = try await store.updateBot(named: "tutor") { $0.systemPrompt = "Teach well." }
        #expect(updated.systemPrompt == "Teach well." && updated.sources == [.tag("area:career")])
        #expect(try await store.snapshot { try $0.bots().map(\.systemPrompt) } == ["Teach well."])
        let missing = await #expect(throws: KBError.self) { try await store.deleteBot(named: "nobody") }
        #expect(missing?.code == .notFound)
        try await store.deleteBot(named: "tutor")
        #expect(try await store.snapshot { try $0.bots() }.isEmpty)
    }

    // MARK: Upload jobs

    @Test(arguments: ContractEngine.all)
    func anUploadRunsFromItsChunksToASourceWithItsOriginalKept(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        let now = Date()
        let job = Job(id: "job-1", source: "upload-1", state: .receiving, contentType: "text/markdown", size: 0, createdAt: now, updatedAt: now)
        try await store.beginJob(StoredJob(job: job, title: "Notes"))
        let twice = await #expect(throws: KBError.self) { try await store.beginJob(StoredJob(job: job)) }
        #expect(twice?.code == .conflict)
        try await store.appendJobChunk(id: "job-1", seq: 0, data: Data("# Notes\n\n".utf8))
        try await store.appendJobChunk(id: "job-1", seq: 1, data: Data("Saturn rules time.".utf8))
        let queued = try await store.queueJob(id: "job-1", contentHash: "h-upload")
        #expect(queued.job.state == .queued && queued.job.size == 27)
        let late = await #expect(throws: KBError.self) { try await store.appendJobChunk(id: "job-1", seq: 2, data: Data("x".utf8)) }
        #expect(late?.code == .conflict)
        let claimed = try #require(try await store.claimJob(staleAfter: 3_600))
        #expect(claimed.job.id == "job-1" && claimed.job.state == .running)
        #expect(try await store.claimJob(staleAfter: 3_600) == nil)   // one claim per job
        try await store.recordProgress(id: "job-1", Job.Progress(pagesDone: 1, pagesTotal: 1))
        let document = contractDocument(claimed.sourcePath, snippets: ["Saturn rules time."], hash: "h-upload")
        _ = try await store.completeJob(id: "job-1", document: document, vectors: nil, embedder: .none,
                                    progress: Job.Progress(pagesDone: 1, pagesTotal: 1, snippetsDone: 1, snippetsTotal: 1), warnings: [])
        let (done, chunks, original, unfinished) = try await store.snapshot { snapshot in
            (try snapshot.storedJob(id: "job-1"), try snapshot.jobChunks(id: "job-1"),
             try snapshot.originalJobID(sourcePath: claimed.sourcePath), try snapshot.unfinishedJobs())
        }
        #expect(done?.job.state == .done && unfinished.isEmpty)
        #expect(chunks.reduce(Data(), +) == Data("# Notes\n\nSaturn rules time.".utf8))
        #expect(original == "job-1")
        #expect(try await store.keywordSearch(SearchQuery("saturn")).map(\.sourcePath) == [claimed.sourcePath])
        // Removing the source takes its job and kept original with it.
        #expect(try await store.removeSources(exactly: [claimed.sourcePath]).count == 1)
        #expect(try await store.snapshot { try $0.storedJob(id: "job-1") } == nil)
    }

    @Test(arguments: ContractEngine.all)
    func aDiscardedUploadLeavesNothing(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        let now = Date()
        let job = Job(id: "job-2", source: "upload-2", state: .receiving, contentType: "text/plain", size: 0, createdAt: now, updatedAt: now)
        let unknownBot = await #expect(throws: KBError.self) { try await store.beginJob(StoredJob(job: job, bots: ["nobody"])) }
        #expect(unknownBot?.code == .notFound)
        try await store.beginJob(StoredJob(job: job))
        try await store.appendJobChunk(id: "job-2", seq: 0, data: Data("bytes".utf8))
        try await store.discardJob(id: "job-2")
        let (stored, chunks) = try await store.snapshot { (try $0.storedJob(id: "job-2"), try $0.jobChunks(id: "job-2")) }
        #expect(stored == nil && chunks.isEmpty)
    }

    // MARK: The request log

    @Test(arguments: ContractEngine.all)
    func theRequestLogIsAppendedGroupedAndPruned(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        let old = Date(timeIntervalSince1970: 1_700_000_000), recent = Date()
        var failed = RequestLogEntry(at: recent, route: "/v1/search", status: 500, requestID: "r3", latencyMilliseconds: 9)
        failed.degraded = true
        try await store.appendRequestLog([
            RequestLogEntry(at: old, route: "/v1/context", status: 200, requestID: "r1", latencyMilliseconds: 5),
            RequestLogEntry(at: recent, route: "/v1/search", status: 200, requestID: "r2", latencyMilliseconds: 7), failed,
        ])
        #expect(try await store.snapshot { try $0.requestLogEntries().map(\.requestID) } == ["r1", "r2", "r3"])
        let byRoute = try await store.snapshot { try $0.usage(since: old.addingTimeInterval(1), by: .route) }
        #expect(byRoute.map(\.key) == ["/v1/search"])
        #expect(byRoute.first?.requests == 2 && byRoute.first?.errors == 1 && byRoute.first?.degraded == 1)
        #expect(try await store.pruneRequestLog(before: old.addingTimeInterval(1)) == 1)
        #expect(try await store.snapshot { try $0.requestLogEntries().map(\.requestID) } == ["r2", "r3"])

        // Every field comes back as written, text that needs quoting included.
        var full = RequestLogEntry(at: recent, route: "POST /v1/context", status: 200, requestID: "r4", latencyMilliseconds: 12.345678)
        (full.caller, full.bot, full.report, full.userHash) = ("app \"one\"", "astro", "weekly", "0b8bdac67311c6a2")
        (full.results, full.tokens, full.budget, full.query) = (6, 1497, 1500, "ما معنى \\ عودة زحل؟ 'quoted'")
        try await store.appendRequestLog([full])
        var read = try #require(try await store.snapshot { try $0.requestLogEntries() }.last)
        #expect(abs(read.at.timeIntervalSince1970 - full.at.timeIntervalSince1970) < 1e-6)
        read.at = full.at
        #expect(read == full)
    }
}
