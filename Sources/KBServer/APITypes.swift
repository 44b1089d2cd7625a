import Foundation
import KBCore
import KBKit
import KBMemory

/// Request and response bodies of the HTTP API (the OpenAPI document describes the same).
enum API {
    struct ContextBody: Decodable {
        var bot: String?
        var report: String?
        var query: String?
        var user: String?
        var budget: Int?
    }

    struct SearchBody: Decodable {
        var query: String
        var k: Int?
        var tags: [String]?
        var kinds: [SourceKind]?
        var sources: [String]?
        var mode: SearchMode?
        /// Search only what this bot may see.
        var bot: String?
    }

    struct MemoryBody: Decodable {
        var content: String
        var title: String?
        var tags: [String]?
        var scope: String?
        var supersede: String?
    }

    struct MemoryPatch: Decodable {
        var content: String?
        var title: String?
        var tags: [String]?
    }

    struct MemorySearchBody: Decodable {
        var query: String
        var scopes: [String]?
        var tags: [String]?
        var k: Int?
        var mode: SearchMode?
        var halfLife: String?
        var includeSuperseded: Bool?
    }

    struct MemoryWithHistory: Encodable {
        var memory: Memory
        var history: [MemoryVersion]
    }

    struct BotBody: Decodable {
        var name: String
        var systemPrompt: String?
        var sources: [String]?
        var memoryScopes: [String]?
    }

    struct BotPatch: Decodable {
        var systemPrompt: String?
        var sources: [String]?
        var memoryScopes: [String]?
    }

    /// `POST /v1/embeddings`, as OpenAI defines it.
    struct EmbeddingsBody: Decodable {
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
    }

    struct Embedding: Encodable {
        enum Vector: Encodable {
            case floats([Float])
            case base64(String)
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

    struct Usage: Encodable {
        var prompt_tokens: Int
        var total_tokens: Int
    }

    struct EmbeddingsResponse: Encodable {
        var object = "list"
        var data: [Embedding]
        var model: String
        var usage: Usage
    }

    struct ErrorBody: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
        }
        var error: Detail
    }
}
