// kb-client: an app's three calls to kb serve, through KBClient (docs/swift.md).
//
//   kb-client context QUESTION [BOT [USER]]   prompt context for a user's turn, with its citations
//   kb-client chat BOT QUESTION [USER]         the bot's answer, streamed, then its citations
//   kb-client remember SCOPE TEXT              adds a memory (scope: user:NAME, bot:NAME, global)
//
// KB_URL (default http://127.0.0.1:8080) and KB_API_TOKEN say which kb serve and as whom.
import Foundation
import KBClient

let usage = """
    usage: kb-client context QUESTION [BOT [USER]]
           kb-client chat BOT QUESTION [USER]
           kb-client remember SCOPE TEXT
    KB_URL (default http://127.0.0.1:8080) and KB_API_TOKEN say which kb serve and as whom.
    """

/// One line per citation: its number, the source's title, the page when it has one.
func show(_ citations: [Components.Schemas.Citation]) {
    guard !citations.isEmpty else { return print("(no citations)") }
    for citation in citations {
        var line = "[\(citation.number)] \(citation.title)"
        if let label = citation.pageLabel { line += ", p. \(label)" } else if let page = citation.pages?.start { line += ", p. \(page)" }
        if let scope = citation.scope { line += " (memory, \(scope))" }
        print(line)
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("kb-client: \(message)\n".utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    let kb = try Client.fromEnvironment()
    switch (arguments.first, arguments.count) {
    case ("context", 2...4):
        let bot = arguments.count > 2 ? arguments[2] : "astro"
        let answer = try await kb.context(body: .json(.init(bot: bot, query: arguments[1], user: arguments.count > 3 ? arguments[3] : nil)))
        switch answer {
        case .ok(let ok):
            let context = try ok.body.json
            print(context.context)
            print("")
            show(context.citations)
        default:
            fail(KBServiceError(answer)?.description ?? "\(answer)")
        }
    case ("chat", 3...4):
        let question = Components.Schemas.ChatCompletionRequest(
            kb: .init(user: arguments.count > 3 ? arguments[3] : nil), messages: [.user(arguments[2])], model: arguments[1])
        for try await event in try await kb.streamChat(question) {
            switch event {
            case .delta(let text):
                FileHandle.standardOutput.write(Data(text.utf8))   // as it arrives, unbuffered
            case .finished(let info):
                print("\n")
                show(info.citations ?? [])
            }
        }
    case ("remember", 3):
        let answer = try await kb.addMemory(body: .json(.init(content: arguments[2], scope: arguments[1])))
        let result: Components.Schemas.RememberResult
        switch answer {
        case .created(let created): result = try created.body.json
        case .ok(let ok): result = try ok.body.json
        default: fail(KBServiceError(answer)?.description ?? "\(answer)")
        }
        print("\(result.created ? "remembered" : "already known"): \(result.memory.id) (\(result.memory.scope))")
    default:
        fail(usage)
    }
} catch let error as KBServiceError {
    fail(error.description)
} catch {
    fail("\(error)")
}
