public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KBCore
import KBEmbed

/// A chat model behind an OpenAI-compatible `POST /chat/completions` endpoint (OpenAI, Ollama,
/// vLLM, llama.cpp, LM Studio), asked for one JSON object. One try, within `timeout`: a model that
/// is down, slow or answers with something else is a `.languageModel` error that says which.
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
    /// (a Markdown code fence around it is allowed).
    func askForJSON(system: String, user: String) async throws -> [String: JSONValue] {
        let endpoint = baseURL.appendingPathComponent("chat/completions")
        var request = URLRequest(url: endpoint, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let apiKey { request.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization") }
        let body: JSONValue = [
            "model": .string(model), "temperature": 0, "response_format": ["type": "json_object"],
            "messages": [["role": "system", "content": .string(system)], ["role": "user", "content": .string(user)]],
        ]
        request.httpBody = try KBJSON.encode(body)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let data: Data, response: URLResponse
        do {
            (data, response) = try await session.dataCancellingSafely(for: request)
        } catch let error as URLError {
            throw KBError(.languageModel, "The model \(name) at \(baseURL.absoluteString) did not answer: "
                + (error.code == .timedOut ? "no answer within \(Int(timeout)) s." : error.localizedDescription + "."))
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw KBError(.languageModel, "The model \(name) at \(baseURL.absoluteString) answered HTTP \(status)"
                + (status == 401 ? "; check KB_LLM_API_KEY." : "."))
        }
        guard case .object(let reply)? = try? JSONDecoder().decode(JSONValue.self, from: data),
              case .array(let choices)? = reply["choices"], case .object(let choice)? = choices.first,
              case .object(let message)? = choice["message"], case .string(let content)? = message["content"] else {
            throw KBError(.languageModel, "The model \(name) answered, but not as a chat completion (no choices[0].message.content).")
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
