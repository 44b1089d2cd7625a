import Foundation
import KBCore
import KBKit
import KBMemory

/// The bodies of `POST /v1/embeddings` (OpenAI's shape) and of errors; kb's own requests are
/// KBKit's request types.
enum API {
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
}
