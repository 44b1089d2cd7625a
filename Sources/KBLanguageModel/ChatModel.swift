public import Foundation
public import KBCore
import KBEmbed

/// A chat model behind an OpenAI-compatible `POST /chat/completions` endpoint (OpenAI, Ollama,
/// vLLM, llama.cpp, LM Studio), asked for one JSON object. One try, within `timeout`: a model that
/// is down or answers with something else is a `.languageModel` error, one too slow an
/// `.upstreamTimeout`, each saying which.
/// The API key is sent as a bearer token and never appears in messages.
///
/// ```swift
/// let model = try ChatModel(spec: "openai:llama3.1", url: "http://127.0.0.1:11434/v1", environment: [:])
/// ```
public struct ChatModel: Sendable, Hashable {
    public var model: String
    /// The API's base URL (the part before `/chat/completions`).
    public var baseURL: URL
    public var apiKey: String?
    /// Seconds the model may take, at least 1. The default is 30.
    public var timeout: TimeInterval = 30

    /// Where the key is read from, in this order.
    public static let keyVariables = ["KB_LLM_API_KEY", "OPENAI_API_KEY"]

    public init(model: String, baseURL: URL, apiKey: String? = nil) {
        self.model = model
        self.baseURL = baseURL
        self.apiKey = apiKey
    }

    /// `openai:MODEL` (`--llm`) at `url` (`--llm-url`; OpenAI's API when nil), the key from the
    /// environment.
    public init(spec: String, url: String?, timeout: TimeInterval = 30, environment: [String: String]) throws {
        guard spec.hasPrefix("openai:"), spec.count > "openai:".count else {
            throw KBError(.invalidArgument, "'\(spec)' is not a chat model; use openai:MODEL (any OpenAI-compatible chat completions endpoint, with --llm-url).")
        }
        let base = url ?? HTTPEmbedder.Configuration.openAIURL.absoluteString
        guard let parsed = URL(string: base), ["http", "https"].contains(parsed.scheme ?? "") else {
            throw KBError(.invalidArgument, "'\(base)' is not an http(s) URL; give the endpoint's base, e.g. http://127.0.0.1:11434/v1.")
        }
        guard timeout >= 1 else { throw KBError(.invalidArgument, "The model's timeout must be at least 1 second; got \(timeout).") }
        self.init(model: String(spec.dropFirst("openai:".count)), baseURL: parsed,
                  apiKey: Self.keyVariables.lazy.compactMap { environment[$0] }.first { !$0.isEmpty })
        self.timeout = timeout
    }

    /// `openai:MODEL`, as it was given.
    public var name: String { "openai:" + model }

    /// Sends the system and user messages and returns the model's answer parsed as a JSON object
    /// (a Markdown code fence around it is allowed), through the same client as chat completions
    /// (`ChatUpstream`): the same errors, timeouts and key handling.
    public func askForJSON(system: String, user: String) async throws -> [String: JSONValue] {
        let upstream = ChatUpstream(model: self)
        let body: JSONValue = [
            "model": .string(model), "temperature": 0, "response_format": ["type": "json_object"],
            "messages": [["role": "system", "content": .string(system)], ["role": "user", "content": .string(user)]],
        ]
        let reply = try await upstream.answer(try await upstream.send(try JSONEncoder().encode(body), stream: false))
        guard case .array(let choices)? = reply["choices"], case .object(let choice)? = choices.first,
              case .object(let message)? = choice["message"], case .string(let content)? = message["content"] else {
            throw KBError(.languageModel, "\(upstream.describe) answered, but not as a chat completion (no choices[0].message.content).")
        }
        var text = content.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("```") {
            text = text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n")
            if text.hasSuffix("```") { text = String(text.dropLast(3)) }
        }
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else {
            throw KBError(.languageModel, "The model \(name) did not answer with a JSON object; nothing was stored.")
        }
        return object
    }
}
