import KBCore
import KBIngest
import KBStore

/// The index's OCR page cache, for loaders whose OCR workers run on Dispatch threads of their
/// own: each call blocks that thread (never one of the cooperative pool) until the store has
/// answered (`OffPool.wait`). Failures are thrown to the loader, which reports them in the
/// ingest's warnings and goes on recognising.
final class StoreOCRCache: OCRPageCache {
    let store: any IndexStore

    init(store: any IndexStore) { self.store = store }

    func pages(contentHash: String, key: String) throws -> [Int: OCRPage] {
        let store = self.store
        let pages = try OffPool.wait { try await store.snapshot { try $0.ocrPages(contentHash: contentHash, key: key) } }.get()
        return Dictionary(pages.map { ($0.page, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func store(_ page: OCRPage, contentHash: String, key: String) throws {
        let store = self.store
        try OffPool.wait { try await store.cacheOCRPage(page, contentHash: contentHash, key: key) }.get()
    }
}
