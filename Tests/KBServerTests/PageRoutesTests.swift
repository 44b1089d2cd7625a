import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KBCore
import KBKit
import KBRequests
import KBServer
import NIOCore
import Testing

/// `GET /v1/sources/{id}/pages/{n}` (a page's picture) and `…/words` (where its words stand).
@Suite struct PageRoutesTests {
    /// The answer's status, headers and body.
    func get(_ client: some TestClientProtocol, _ uri: String, token: String = Fixture.token) async throws -> (status: Int, headers: HTTPFields, body: Data) {
        try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
            (Int(response.status.code), response.headers, Data(buffer: response.body))
        }
    }

    func status(_ client: some TestClientProtocol, _ uri: String, token: String = Fixture.token) async throws -> Int {
        try await get(client, uri, token: token).status
    }

    /// The fixture with the book uploaded twice: shared and seen by astro, and private to ada.
    func library() async throws -> Fixture {
        let fixture = try await Fixture()
        for (id, user) in [("book", nil), ("ada-book", "ada")] as [(String, String?)] {
            var upload = UploadRequest(contentType: "application/pdf")
            upload.id = id
            upload.user = user
            upload.bot = ["astro"]
            let writing = try await fixture.kb.beginUpload(upload, as: .admin)
            try await writing.append(try Data(contentsOf: SourcesAPITests.pdf))
            _ = try await writing.finish()
        }
        #expect(await fixture.kb.runQueuedJobs() == 2)
        return fixture
    }

    @Test func aPageIsAPNGOfTheWidthAskedWithTheSourcesPageCount() async throws {
        let fixture = try await library()
        try await fixture.service().application().test(.router) { client in
            let page = try await get(client, "/v1/sources/book/pages/2?width=300")
            #expect(page.status == 200 && page.headers[.contentType] == "image/png" && page.headers[HTTPField.Name("KB-Page-Count")!] == "6")
            let header = [UInt8](page.body.prefix(24))
            #expect(header.prefix(4) == [0x89, 0x50, 0x4E, 0x47] && header[16..<20].reduce(0) { $0 << 8 | Int($1) } == 300)
            // What is not a page, or not a width, is named.
            for (uri, status, words) in [
                ("/v1/sources/book/pages/7", 404, "no page 7"), ("/v1/sources/book/pages/0", 404, "no page 0"),
                ("/v1/sources/book/pages/two", 400, "not a page number"), ("/v1/sources/book/pages/1?width=5000", 400, "200–2000"),
                ("/v1/sources/book/pages/1?width=wide", 400, "width"), ("/v1/sources/book/pages/1?dpi=300", 400, "dpi is not a parameter"),
                ("/v1/sources/book/pages/1?width=300&width=400", 400, "twice"), ("/v1/sources/nothing/pages/1", 404, "No source"),
            ] {
                let answer = try await get(client, uri)
                let message = String(decoding: answer.body, as: UTF8.self)
                #expect(answer.status == status && message.contains(words), "\(uri): \(answer.status) \(message)")
            }
            let venus = try #require(try await fixture.kb.sources(SourceListRequest(), as: .admin).sources.first { $0.title == "Venus" }?.id)
            let note = try await get(client, "/v1/sources/\(venus)/pages/1")
            #expect(note.status == 415 && String(decoding: note.body, as: UTF8.self).contains("only PDF and scanned-image sources have pages"))
        }
    }

    @Test func theWordsOfASnippetAreOnTheirPageAsTheDocumentSays() async throws {
        let fixture = try await library()
        let snippets = try await fixture.kb.snippets(ofSource: "book", as: .admin).snippets
        let snippet = try #require(snippets.first { $0.text.contains("zebra quartz") })
        try await fixture.service().application().test(.router) { client in   // answers checked against the document
            let answer = try await get(client, "/v1/sources/book/pages/\(snippet.pages!.start)/words?snippet=\(snippet.ordinal)")
            #expect(answer.status == 200)
            let words = try JSONDecoder().decode(PageWords.self, from: answer.body)
            #expect(words.snippet == snippet.ordinal && words.pages == 6 && words.words.contains { $0.text.lowercased().hasPrefix("zebra") })
            let every = try JSONDecoder().decode(PageWords.self, from: try await get(client, "/v1/sources/book/pages/\(snippet.pages!.start)/words").body)
            #expect(every.snippet == nil && every.words.count > words.words.count && words.words.allSatisfy(every.words.contains))
            #expect(try await status(client, "/v1/sources/book/pages/4/words?snippet=-1") == 400)
            // An ordinal the document allows but the source lacks is a 404; one past the
            // document's maximum is refused as invalid.
            #expect(try await status(client, "/v1/sources/book/pages/4/words?snippet=\(Int.max)") == 404)
            #expect(try await status(client, "/v1/sources/book/pages/4/words?snippet=4392485268325472824811350654976") == 400)
        }
    }

    @Test func aScopedTokenSeesThePagesOfItsBotsAndItsUsersPrivateSourcesOnly() async throws {
        let fixture = try await library()
        var ada = TokenRequest(name: "ada-app")
        ada.scopes = ["user:ada"]
        ada.bots = ["astro"]
        let adaToken = try await fixture.kb.createToken(ada, as: .admin).token
        var bob = TokenRequest(name: "bob-app")
        bob.scopes = ["user:bob"]
        bob.bots = ["chef"]
        let bobToken = try await fixture.kb.createToken(bob, as: .admin).token
        try await fixture.service().application().test(.router) { client in
            var seen: [Int] = []
            for (uri, token) in [
                ("/v1/sources/ada-book/pages/1?width=200&bot=astro&user=ada", adaToken),
                ("/v1/sources/book/pages/1?width=200&bot=astro", adaToken),
                // Another user's private pages are not found; a bot the token lacks is refused; the
                // token's own bot does not see the book.
                ("/v1/sources/ada-book/pages/1?width=200&bot=chef&user=bob", bobToken),
                ("/v1/sources/book/pages/1?width=200&bot=astro", bobToken),
                ("/v1/sources/book/pages/1?width=200&bot=chef", bobToken),
                ("/v1/sources/ada-book/pages/1/words?bot=chef&user=ada", bobToken),
            ] {
                seen.append(try await status(client, uri, token: token))
            }
            #expect(seen == [200, 200, 404, 403, 404, 403])
        }
    }
}
