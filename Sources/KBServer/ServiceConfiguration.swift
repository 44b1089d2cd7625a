import Foundation
public import KBKit
import KBCore
public import KBLanguageModel
public import KBRequests

/// How `kb serve` runs.
///
/// ```swift
/// var configuration = ServiceConfiguration()
/// configuration.token = "s3cret"
/// ```
public struct ServiceConfiguration: Sendable {
    /// The address to bind. The default is 127.0.0.1 (loopback only).
    public var host = "127.0.0.1"
    /// The default is 8080.
    public var port = 8080
    /// The bearer token every request but `/healthz` must carry; nil for none (loopback only).
    /// The default is nil.
    public var token: String?
    /// Largest request body in bytes. The default is 1 MiB.
    public var maxBodyBytes = 1 << 20
    /// Largest number of inputs to `/v1/embeddings`. The default is 256.
    public var maxEmbeddingInputs = 256
    /// Report templates by name (loaded when the service starts; requests name them, never paths).
    /// The default is none.
    public var reports: [String: ReportTemplate] = [:]
    /// The upstream chat model (`--llm`): what `/v1/chat/completions` answers with, and what
    /// memory extraction and the query rewriter ask; nil: chat completions are refused and memory
    /// extraction uses kb's explicit patterns. The default is nil.
    public var chatModel: ChatModel?
    /// How answered requests are logged (`kb usage`); nil logs nothing. The default keeps 30
    /// days, without query text.
    public var requestLog: RequestLog.Settings? = RequestLog.Settings()
    /// Serve `GET /metrics` without a token. The default is false (admin token only).
    public var metricsPublic = false
    /// Origins of web pages (`scheme://host[:port]`) that may call kb from a browser, answered
    /// with CORS for exactly those origins (`--allow-origin`); pages of any other origin are
    /// refused (403). kb's own pages need no entry. The default is none.
    public var allowedOrigins: [String] = []
    /// Host names kb answers to besides its bound address, `localhost`, `127.0.0.1` and `[::1]`
    /// (`--allowed-host`): the name a reverse proxy passes on, or the machine's name on a
    /// network. A request for any other name is refused (421), which stops DNS rebinding. The
    /// default is none.
    public var allowedHosts: [String] = []
    /// Folders kept in the index as their files change (`--watch`): new and edited files are
    /// read, deleted ones' sources removed (`FolderWatcher`). The default is none.
    public var watch: WatchSettings?
    /// Check every JSON answer against the OpenAPI document and answer 500 on a mismatch (a test
    /// aid: the tests and `KB_CHECK_ANSWERS=1` turn it on). The default is off.
    public var checksAnswers = ProcessInfo.processInfo.environment["KB_CHECK_ANSWERS"] == "1"

    public init() {}

    /// Whether `host` is a loopback address.
    public var isLoopback: Bool {
        ["127.0.0.1", "::1", "localhost"].contains(host) || host.hasPrefix("127.")
    }

    /// Refuses to listen beyond this machine without a token.
    public func validate() throws {
        guard isLoopback || !(token ?? "").isEmpty else {
            throw KBError(.invalidArgument,
                "kb serve refuses to listen on \(host) without a token: anyone who can reach it could read the index. "
              + "Set --token or KB_API_TOKEN, or bind to 127.0.0.1.")
        }
        if let token, token.count < 16 {
            throw KBError(.invalidArgument, "The API token is \(token.count) characters; use at least 16 (e.g. `openssl rand -hex 24`).")
        }
        guard (1...65535).contains(port) else { throw KBError(.invalidArgument, "The port must be 1–65535; got \(port).") }
        guard maxBodyBytes >= 1024 else { throw KBError(.invalidArgument, "The body limit must be at least 1024 bytes.") }
        _ = try BrowserPolicy(self)
    }
}
