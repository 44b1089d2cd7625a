import Foundation
import KBCore
import KBTestSupport
import Testing

/// Runs the built `kb` executable as a user would.
struct CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var json: Any? { try? JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed]) }
        var jsonValue: JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: Data(stdout.utf8)) }
    }

    let workdir: URL
    private let indexes = IndexNames()

    init() throws {
        workdir = FileManager.default.temporaryDirectory.appendingPathComponent("kb-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workdir, withIntermediateDirectories: true)
    }

    /// The index that `--db NAME` (a bare `*.sqlite` name) means in a test: that file in
    /// `workdir`, or a PostgreSQL database of its own per name when the suite runs against
    /// PostgreSQL (`TestBackend`).
    func index(named name: String) -> String {
        indexes.lock.withLock {
            if let known = indexes.byName[name] { return known }
            let made = TestBackend.freshIndex(in: workdir, name: name)
            indexes.byName[name] = made
            return made
        }
    }

    /// The index `--db kb.sqlite` names.
    var index: String { index(named: "kb.sqlite") }

    /// @unchecked Sendable: `byName` is guarded by `lock`.
    private final class IndexNames: @unchecked Sendable {
        let lock = NSLock()
        var byName: [String: String] = [:]
    }

    /// The `kb` binary beside the test bundle, or `KB_BINARY`.
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["KB_BINARY"] { return URL(fileURLWithPath: path) }
        let bundleDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundleDir, bundleDir.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("kb")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return packageRoot.appendingPathComponent(".build/release/kb")
    }

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    func write(_ name: String, _ text: String) throws {
        let url = workdir.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    @discardableResult
    func run(_ arguments: String..., environment extra: [String: String] = [:], input: String? = nil, inputFrom: String? = nil) async throws -> Result {
        try await run(arguments, environment: extra, input: input, inputFrom: inputFrom)
    }

    /// Runs kb and waits for it on a Dispatch thread: tests run on Swift's cooperative pool, and a
    /// test blocked in `waitUntilExit` there would starve every other test's tasks.
    /// `input`, when given, is what kb reads on standard input; `inputFrom` names a file (or folder,
    /// relative to the test's folder) opened as standard input instead; otherwise standard input is empty.
    func run(_ arguments: [String], environment extra: [String: String] = [:], input: String? = nil, inputFrom: String? = nil) async throws -> Result {
        let process = Process()
        process.executableURL = CLI.binary
        // `--db NAME.sqlite` names one of this test's indexes, whichever backend the suite runs against.
        process.arguments = arguments.indices.map { i in
            let value = arguments[i]
            return i > 0 && arguments[i - 1] == "--db" && value.hasSuffix(".sqlite") && !value.contains("/") ? index(named: value) : value
        }
        process.currentDirectoryURL = workdir
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = workdir.path
        environment["XDG_DATA_HOME"] = workdir.appendingPathComponent("xdg").path
        environment["KB_DB"] = nil
        environment["KB_MODEL_DIR"] = Locations.modelDirectory(ProcessInfo.processInfo.environment)
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let stdin = Pipe()
        if let inputFrom {
            process.standardInput = try FileHandle(forReadingFrom: workdir.appendingPathComponent(inputFrom))
        } else {
            process.standardInput = stdin
        }
        try process.run()
        DispatchQueue.global().async {
            // kb may exit before reading all of it (a refused command): what is left unwritten is no error.
            if let input { try? DescriptorIO.writeAll(Data(input.utf8), to: stdin.fileHandleForWriting.fileDescriptor) }
            try? stdin.fileHandleForWriting.close()
        }
        // Both pipes are read at once (kb filling one while the other is waited on would stall both),
        // by readers that try an interrupted read again: the test process gets signals as its
        // children end, and Foundation's `readDataToEndOfFile()` crashes on `EINTR`.
        let (output, errData) = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let errors = LockedValue(Data())
                let group = DispatchGroup()
                DispatchQueue.global().async(group: group) {
                    let data = (try? DescriptorIO.readToEnd(err.fileHandleForReading.fileDescriptor)) ?? Data()
                    errors.withLock { $0 = data }
                }
                let outData = (try? DescriptorIO.readToEnd(out.fileHandleForReading.fileDescriptor)) ?? Data()
                group.wait()
                process.waitUntilExit()
                continuation.resume(returning: (outData, errors.withLock { $0 }))
            }
        }
        return Result(status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// Golden files under Tests/kbTests/Snapshots; `KB_RECORD_SNAPSHOTS=1` writes them anew.
enum Snapshot {
    static func check(_ actual: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let url = CLI.packageRoot.appendingPathComponent("Tests/kbTests/Snapshots/\(name)")
        if ProcessInfo.processInfo.environment["KB_RECORD_SNAPSHOTS"] == "1" {
            try actual.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            Issue.record("No snapshot \(name); run with KB_RECORD_SNAPSHOTS=1 to record it.", sourceLocation: sourceLocation)
            return
        }
        #expect(actual == expected, "snapshot \(name) differs; re-record with KB_RECORD_SNAPSHOTS=1 if the change is intended",
                sourceLocation: sourceLocation)
    }

    /// The structure of a JSON value: keys and value types, with arrays shown by their first element.
    static func shape(_ value: JSONValue?, indent: String = "") -> String {
        switch value {
        case .object(let object)?:
            let inner = object.keys.sorted().map { "\(indent)  \($0): \(shape(object[$0], indent: indent + "  "))" }
            return "{\n" + inner.joined(separator: "\n") + "\n\(indent)}"
        case .array(let array)?:
            return array.first.map { "[" + shape($0, indent: indent) + "]" } ?? "[]"
        case .bool?: return "bool"
        case .number?: return "number"
        case .string?: return "string"
        case .null?, nil: return "null"
        }
    }
}

/// Any JSON document, decoded without losing the difference between numbers and booleans.
indirect enum JSONValue: Decodable {
    case object([String: JSONValue]), array([JSONValue]), string(String), number(Double), bool(Bool), null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let b = try? container.decode(Bool.self) { self = .bool(b) }
        else if let n = try? container.decode(Double.self) { self = .number(n) }
        else if let s = try? container.decode(String.self) { self = .string(s) }
        else if let a = try? container.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }
}
