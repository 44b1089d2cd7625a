import Foundation
import PackagePlugin

/// Embeds the console's files (`Sources/KBServer/Console/`: HTML, CSS, JavaScript modules and the
/// icon, written for kb) into the binary at build time, as `ConsoleAssets` — no copy is
/// committed, and a changed file is embedded by the next build.
@main
struct EmbedConsole: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let folder = target.directoryURL.appending(path: "Console")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "ConsoleAssets.swift")
        return [.buildCommand(
            displayName: "Embedding the console's \(files.count) files",
            executable: try context.tool(named: "kb-embed-console").url,
            arguments: [output.path] + files.map(\.path),
            inputFiles: files,
            outputFiles: [output])]
    }
}
