/// Where kb keeps its files, from the environment. Pure: pass the environment in.
public enum Locations {
    /// `$XDG_DATA_HOME/kb`, else `$HOME/.local/share/kb`.
    public static func dataDirectory(_ environment: [String: String]) -> String {
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty { return xdg + "/kb" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "~"
        return home + "/.local/share/kb"
    }

    /// The index used when none is named: `$KB_DB`, else `<data directory>/kb.sqlite`.
    public static func defaultIndex(_ environment: [String: String]) -> String {
        if let db = environment["KB_DB"], !db.isEmpty { return db }
        return dataDirectory(environment) + "/kb.sqlite"
    }

    /// The built-in English model's name (`--embedder local`, `$KB_MODEL_DIR`'s default).
    public static let defaultModelName = "all-MiniLM-L6-v2"

    /// The multilingual model a new index uses unless told otherwise (installed by
    /// `scripts/install-model.sh multilingual-e5-small`, which `scripts/setup.sh` runs).
    public static let multilingualModelName = "multilingual-e5-small"

    /// The folder of an installed model by name (`scripts/install-model.sh NAME`):
    /// `<data directory>/models/NAME`.
    public static func modelDirectory(named name: String, _ environment: [String: String]) -> String {
        dataDirectory(environment) + "/models/" + name
    }

    /// The local model folder: `$KB_MODEL_DIR`, else `<data directory>/models/all-MiniLM-L6-v2`.
    public static func modelDirectory(_ environment: [String: String]) -> String {
        if let dir = environment["KB_MODEL_DIR"], !dir.isEmpty { return dir }
        return dataDirectory(environment) + "/models/" + defaultModelName
    }
}
