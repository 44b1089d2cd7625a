import Foundation

// kb-embed-console OUTPUT FILE…: writes OUTPUT, a Swift file with `ConsoleAssets.files` — each
// file's name, media type and text — for the EmbedConsole build plugin.
let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first else {
    FileHandle.standardError.write(Data("usage: kb-embed-console OUTPUT FILE…\n".utf8))
    exit(2)
}
let types = ["html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
             "svg": "image/svg+xml"]

/// A raw string literal that holds `text` whatever it contains.
func literal(_ text: String) -> String {
    var hashes = "#"
    while text.contains("\"\"\"" + hashes) || text.contains("\\" + hashes) { hashes += "#" }
    return hashes + "\"\"\"\n" + text + "\n\"\"\"" + hashes
}

var lines = ["// Generated at build time by the EmbedConsole plugin from Sources/KBServer/Console/.", "",
             "/// The console's files, by name: their media type and text.", "enum ConsoleAssets {",
             "    static let files: [String: (type: String, text: String)] = ["]
for path in arguments.dropFirst().sorted() {
    let url = URL(fileURLWithPath: path)
    guard let type = types[url.pathExtension] else { continue }
    var text = try String(contentsOf: url, encoding: .utf8)
    while text.hasSuffix("\n") { text.removeLast() }
    lines.append("        \"\(url.lastPathComponent)\": (\"\(type)\", \(literal(text))),")
}
lines += ["    ]", "}", ""]
// Written only when it changes: the build may run this tool again with nothing changed (a new
// build plan), and a rewritten file would make the compiler build KBServer again.
let source = lines.joined(separator: "\n")
if (try? String(contentsOfFile: output, encoding: .utf8)) != source {
    try source.write(toFile: output, atomically: true, encoding: .utf8)
}
