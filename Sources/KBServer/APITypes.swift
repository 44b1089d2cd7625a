import Foundation
import KBCore
import KBKit
import KBMemory

/// The bodies of `POST /v1/embeddings` (OpenAI's shape) and of errors; kb's own requests are
/// KBKit's request types.
enum API {
    /// A body in one of OpenAI's shapes, decoded as strictly as kb's own requests: the document
    /// closes it (`additionalProperties: false`), so a field it does not name is a 400, never
    /// silently dropped.
    protocol Body: Decodable {
        /// Its fields, as the document names them.
        static var fields: [String] { get }
        /// What the body looks like, for the error that a body of another shape gets.
        static var shape: String { get }
    }

    /// Decodes `data` as `T`: a JSON object with no field `T` lacks, then `T` itself.
    static func decode<T: Body>(_ type: T.Type, from data: Data) throws -> T {
        guard case .object(let object)? = try? JSONDecoder().decode(KBCore.JSONValue.self, from: data) else {
            throw KBError(.invalidArgument, "The body must be \(T.shape).")
        }
        if let unknown = object.keys.sorted().first(where: { !T.fields.contains($0) }) {
            throw KBError(.invalidArgument, "Unknown field \"\(unknown)\". This request takes \(T.fields.sorted().joined(separator: ", ")).")
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw KBError(.invalidArgument, "The body must be \(T.shape).")
        }
    }

    /// `POST /v1/embeddings`, as OpenAI defines it.
    struct EmbeddingsBody: Body {
        static let fields = ["input", "model", "encoding_format", "dimensions", "user", "input_type"]
        static let shape = "an OpenAI embeddings request: {\"input\": \"text\" or [\"texts\"], \"model\": …}"
        enum Input: Decodable {
            case one(String)
            case many([String])
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let text = try? container.decode(String.self) { self = .one(text) } else { self = .many(try container.decode([String].self)) }
            }
            var texts: [String] {
                switch self {
                case .one(let text): [text]
                case .many(let texts): texts
                }
            }
        }
        var input: Input
        var model: String?
        var encoding_format: String?
        var dimensions: Int?
        var user: String?
        /// What the texts are: `passage` (the default; also `document`, `search_document`) or
        /// `query` (also `search_query`), as other embedding APIs name them.
        var input_type: String?
    }

    /// OpenAI's vector store search (`POST /v1/vector_stores/{id}/search`).
    struct VectorStoreSearchBody: Body {
        static let fields = ["query", "max_num_results", "rewrite_query", "filters", "ranking_options"]
        static let shape = "an OpenAI vector store search: {\"query\": \"text\" or [\"texts\"], \"max_num_results\": 1–50, \"filters\": …}"
        struct RankingOptions: Decodable {
            var ranker: String?
            var score_threshold: Double?
        }
        var query: EmbeddingsBody.Input
        var max_num_results: Int?
        var rewrite_query: Bool?
        var filters: KBCore.JSONValue?
        var ranking_options: RankingOptions?
    }

    struct VectorStoreResult: Codable {
        struct Content: Codable {
            var type = "text"
            var text: String
        }
        var file_id: String
        var filename: String
        var score: Double
        var attributes: [String: KBCore.JSONValue]
        var content: [Content]
    }

    struct VectorStoreSearchPage: Codable, SchemaFieldNotes {
        var object = "vector_store.search_results.page"
        var search_query: [String]
        var data: [VectorStoreResult]
        var has_more = false
        var next_page: String? = nil

        enum CodingKeys: String, CodingKey { case object, search_query, data, has_more, next_page }

        static let fieldNotes: [String: JSONValue] = [
            "next_page": ["type": ["string", "null"], "description": "Always null: one page holds every result."],
        ]

        init(search_query: [String], data: [VectorStoreResult]) {
            self.search_query = search_query
            self.data = data
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            object = try container.decode(String.self, forKey: .object)
            search_query = try container.decode([String].self, forKey: .search_query)
            data = try container.decode([VectorStoreResult].self, forKey: .data)
            has_more = try container.decode(Bool.self, forKey: .has_more)
            next_page = try container.decode(String?.self, forKey: .next_page)   // present, as null
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(object, forKey: .object)
            try container.encode(search_query, forKey: .search_query)
            try container.encode(data, forKey: .data)
            try container.encode(has_more, forKey: .has_more)
            try container.encodeNil(forKey: .next_page)   // OpenAI sends null
        }
    }

    struct Embedding: Codable {
        /// The numbers, or (encoding_format base64) their little-endian floats in base 64.
        enum Vector: Codable, SchemaDescribed {
            case floats([Float])
            case base64(String)
            static let jsonSchema: JSONValue = ["anyOf": [["type": "array", "items": ["type": "number"]], ["type": "string"]]]
            static let schemaPlaceholder = Vector.floats([])
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let text = try? container.decode(String.self) { self = .base64(text) } else { self = .floats(try container.decode([Float].self)) }
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .floats(let values): try container.encode(values)
                case .base64(let text): try container.encode(text)
                }
            }
        }
        var object = "embedding"
        var index: Int
        var embedding: Vector
    }

    struct Usage: Codable {
        var prompt_tokens: Int
        var total_tokens: Int
    }

    struct EmbeddingsResponse: Codable, SchemaFieldNotes {
        static let fieldNotes: [String: JSONValue] = [
            "input_type": ["enum": ["passage", "query"], "description": "The role the texts were embedded in."],
        ]
        var object = "list"
        var data: [Embedding]
        var model: String
        var usage: Usage
        /// The role the texts were embedded in: `passage` or `query` (kb's addition).
        var input_type: String
    }
}
