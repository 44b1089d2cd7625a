import Foundation
import Testing

/// Every `kb …` line in README's Usage block runs against the sample corpus and succeeds.
@Suite struct ReadmeTests {
    static func usageCommands() throws -> [String] {
        let readme = try String(contentsOf: CLI.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        guard let usage = readme.range(of: "## Usage") else { return [] }
        let rest = readme[usage.upperBound...]
        guard let open = rest.range(of: "```sh\n"), let close = rest[open.upperBound...].range(of: "```") else { return [] }
        return rest[open.upperBound..<close.lowerBound].split(separator: "\n").map { line in
            String(line.split(separator: "#", maxSplits: 1).first ?? "").trimmingCharacters(in: .whitespaces)
        }.filter { $0.hasPrefix("kb ") || $0.hasPrefix("printf '") }
    }

    /// A line `printf 'TEXT' | kb …`: the text kb reads on standard input (`\n` a line break), and the command.
    static func piped(_ command: String) -> (input: String?, command: String) {
        guard command.hasPrefix("printf '"), let end = command.dropFirst(8).firstIndex(of: "'"),
              let pipe = command[end...].range(of: "| ") else { return (nil, command) }
        let text = command[command.index(command.startIndex, offsetBy: 8)..<end].replacingOccurrences(of: "\\n", with: "\n")
        return (text, String(command[pipe.upperBound...]))
    }

    @Test func usageBlockCommandsRunOnTheSampleCorpus() async throws {
        let commands = try Self.usageCommands()
        #expect(commands.count >= 5)
        let cli = try CLI()
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("corpus"),
                                         to: cli.workdir.appendingPathComponent("corpus"))
        for line in commands {
            let (input, command) = Self.piped(line)
            #expect(command.hasPrefix("kb "), "`\(line)` is not a kb command")
            let arguments = try Self.split(String(command.dropFirst(3)))
            let result = try await cli.run(arguments, environment: ["KB_DB": cli.workdir.appendingPathComponent("readme.sqlite").path],
                                           input: input)
            #expect(result.status == 0, "`\(command)` exited \(result.status): \(result.stderr)")
            #expect(!result.stdout.contains("No matches"), "`\(command)` found nothing")
        }
    }

    /// Splits a shell line into words, honouring double quotes.
    static func split(_ line: String) throws -> [String] {
        var words: [String] = [], current = "", quoted = false, inWord = false
        for c in line {
            if c == "\"" { quoted.toggle(); inWord = true }
            else if c == " " && !quoted { if inWord { words.append(current) }; current = ""; inWord = false }
            else { current.append(c); inWord = true }
        }
        if inWord { words.append(current) }
        return words
    }
}
