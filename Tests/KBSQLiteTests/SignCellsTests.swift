import Foundation
@testable import KBSQLite
import Testing

/// The sign stage in cells (`SignCells`), on a shelf of 200 books of 100 rows in chapters of 10,
/// written book by book, made to count as a very large index (cells from 16,384 rows).
@Suite struct SignCellsTests {
    static let data = shelf(books: 200)

    /// Each book around a random theme, each chapter around a point near it, each row near its
    /// chapter's (cosines ≈ 0.67 within a chapter, ≈ 0.45 within a book, ≈ 0 across books).
    static func shelf(books: Int, seed: UInt64 = 31, firstID: Int64 = 7) -> [(id: Int64, vector: [Float])] {
        let themes = randomVectors(count: books, dimension: 384, seed: seed).map(\.vector)
        let chapters = randomVectors(count: books * 10, dimension: 384, seed: seed + 1).map(\.vector)
        let noise = randomVectors(count: books * 100, dimension: 384, seed: seed + 2).map(\.vector)
        func unit(_ v: [Float]) -> [Float] {
            let norm = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
            return v.map { $0 / norm }
        }
        return noise.enumerated().map { row, noise in
            let chapter = unit(zip(themes[row / 100], chapters[row / 10]).map { $0 + 0.8 * $1 })
            return (firstID + Int64(row), unit(zip(chapter, noise).map { $0 + 0.7 * $1 }))
        }
    }

    static func index() throws -> VectorMatrix {
        let index = VectorMatrix(dimension: 384, cellsFrom: 16_384)
        try index.upsert(data)
        index.enableQuantization()
        return index
    }

    @Test func groupedVectorsAreSearchedInTheirNearestCellsWithRecallAtLeast099() throws {
        let index = try Self.index()
        // A cell a book (two books of one theme: one cell).
        #expect((180...200).contains(index.signCellCount), "\(index.signCellCount)")
        let queries = nearbyQueries(stride(from: 11, to: Self.data.count, by: 400).map { Self.data[$0].vector }, seed: 77)
        let counts = try SignStageTests.expectRecallThroughTheSignStage(index, queries)
        // Every search through the stage scored the signs of a part of the rows only.
        #expect(counts.inCells == counts.searches, "\(counts)")
        #expect(counts.signRows / max(1, counts.searches) < Self.data.count / 2, "\(counts)")
    }

    @Test func fartherQueriesAreSearchedInCellsWithRecallAtLeast099() throws {
        let index = try Self.index()
        let far = nearbyQueries(stride(from: 23, to: Self.data.count, by: 400).map { Self.data[$0].vector }, seed: 78, noise: 2.0)
        let recall = try SignStageTests.recall(index, far)
        #expect(recall >= 0.99, "recall@10 \(recall)")
        let counts = index.signStageCounts
        #expect(counts.searches >= far.count * 9 / 10 && counts.inCells == counts.searches, "\(counts)")
    }

    /// Queries farther than the cells' tiers hold for take the farthest tier, over every row's
    /// signs (`SignStage.tierCells`), instead of the int8 scan of every row. (On 400 books: the
    /// third tier is at least 8,192 rows deep, and a tier takes at most a quarter of the rows.)
    @Test func fartherStillQueriesAreSearchedOverEveryRowsSigns() throws {
        let data = Self.shelf(books: 400, seed: 57)
        let index = VectorMatrix(dimension: 384, cellsFrom: 16_384)
        try index.upsert(data)
        index.enableQuantization()
        #expect(index.signStageDepths.count == 3 && index.signCellProbes.last == [], "\(index.signStageDepths) \(index.signCellProbes)")
        let far = nearbyQueries(stride(from: 37, to: data.count, by: 800).map { data[$0].vector }, seed: 79, noise: 3.0)
        let recall = try SignStageTests.recall(index, far)
        #expect(recall >= 0.99, "recall@10 \(recall)")
        let counts = index.signStageCounts
        #expect(counts.scanned <= far.count / 10 && counts.searches - counts.inCells >= far.count / 2, "\(counts)")
        // A top 50 there would give int8 products to more than a quarter of the rows: the int8 scan.
        let before = index.signStageCounts
        for query in far { _ = try index.search(query, k: 50, quantized: true) }
        let after = index.signStageCounts
        #expect(after.searches - after.inCells == before.searches - before.inCells && after.scanned > before.scanned, "\(before) \(after)")
    }

    /// Rows written in no order leave a query's top rows in most runs of rows: no cells.
    @Test func rowsInNoOrderAreSearchedWithoutCells() throws {
        let index = VectorMatrix(dimension: 384, cellsFrom: 16_384)
        try index.upsert(SignStageTests.data)
        index.enableQuantization()
        #expect(index.signStageDepth != nil && index.signCellCount == 0)
    }

    @Test func queriesFarFromEveryRowGetTheInt8ScanOfEveryRow() throws {
        let index = try Self.index()
        let far = randomVectors(count: 20, dimension: 384, seed: 4242).map(\.vector)
        let recall = try SignStageTests.recall(index, far)
        #expect(recall >= 0.99, "recall@10 \(recall)")
        #expect(index.signStageCounts.scanned == far.count && index.signStageCounts.searches == 0)
    }

    /// A filter takes more cells the fewer rows it allows; one that allows so few that half the
    /// cells would be taken takes the shared pass over every row's signs. All hold, with recall.
    @Test(arguments: [3, -10, 8])
    func filtersHoldInCells(every: Int) throws {
        let index = try Self.index()
        try SignStageTests.expectFilteredRecall(index, Self.data, every: every)
        let counts = index.signStageCounts
        // All but every tenth row: 16 cells of 190 widened by 10/9; every third row: 6 times as many.
        #expect(every < 0 ? counts.inCells == counts.searches : counts.inCells == 0, "\(counts)")
    }

    /// New rows join the cell of their nearest centre, replaced ones move, removed ones leave
    /// (the last row, renumbered, is found in its cell under its new number).
    @Test func theCellsFollowUpdatesAndRemovals() throws {
        let index = try Self.index()
        #expect(index.signCellCount > 0)
        try index.remove(Self.data.prefix(3_000).map(\.id))
        let moved = Array(Self.shelf(books: 2, seed: 91, firstID: 1_000_000).shuffled().prefix(200))
        try index.upsert(moved)
        try index.upsert(zip(Self.data[5_000..<5_200], moved).map { (id: $0.id, vector: $1.vector) })
        let cells = try #require(index.signStage.withLock { $0.calibration?.cells })
        #expect(cells.cellOf.count == index.count)
        for (cell, rows) in cells.rows.enumerated() {
            for (slot, row) in rows.enumerated() {
                #expect(Int(cells.cellOf[Int(row)]) == cell && Int(cells.slotOf[Int(row)]) == slot)
                for word in 0..<cells.words {
                    #expect(cells.signs[cell][SignCells.slot(slot, word, cells.words)] == index.signBits[index.signSlot(Int(row), word)])
                }
            }
        }
        #expect(cells.rows.reduce(0) { $0 + $1.count } == index.count)
        let queries = nearbyQueries(moved.prefix(40).map(\.vector) + Self.data.suffix(40).map(\.vector), seed: 8)
        let recall = try SignStageTests.recall(index, queries)
        #expect(recall >= 0.99, "recall@10 \(recall)")
        #expect(index.signStageCounts.inCells > 0, "\(index.signStageCounts)")
    }

    /// The cells are saved with the matrix and read back: the restored copy searches in them,
    /// with the same results.
    @Test func theCellsAreSavedWithTheMatrix() throws {
        let index = try Self.index()
        #expect(index.signCellCount > 0)
        let path = temporaryPath("cells")
        let form = index.savedForm()
        try SavedFile.write(to: path, stamp: .init(created: "c", generation: 1, kind: "k", detail: "d"), numbers: form.numbers, sections: form.sections)
        let restored = try VectorMatrix.restored(from: SavedFile(path: path), dimension: 384, cellsFrom: 16_384, floatsOnDisk: true)
        #expect(restored.signCellCount == index.signCellCount && restored.signStageDepths == index.signStageDepths)
        for query in nearbyQueries(stride(from: 7, to: Self.data.count, by: 1000).map { Self.data[$0].vector }, seed: 12) {
            let a = try index.search(query, k: 10, quantized: true), b = try restored.search(query, k: 10, quantized: true)
            #expect(a.map(\.id) == b.map(\.id) && a.map(\.score) == b.map(\.score))
        }
        #expect(restored.signStageCounts.inCells > 0, "\(restored.signStageCounts)")
    }
}
