import KBMemory

/// A memory to delete with its history: `kb memory delete`, `DELETE /v1/memories/{id}` and the
/// MCP tool `forget`.
public struct ForgetRequest: KBRequest, Hashable {
    public var id: String

    public init(id: String) { self.id = id }

    public static let schemaName = "ForgetRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [.string("id", "The memory's id, or a unique prefix of 4 or more characters.", required: true, pattern: Pattern.memoryID)]
    }

    /// The memory's id or prefix.
    public func validated(_ limits: Limits) throws -> String { try MemoryRules.idOrPrefix(try FieldRules(Self.self, limits).text(id, "id")) }
}
