public import KBCore

/// Everything kb holds for a scope, to be erased: `kb memory erase --scope`,
/// `DELETE /v1/memories?scope=` and the MCP tool `forget_user`. For `user:ID`, that user's private
/// sources go too.
///
/// ```swift
/// let erased = try await kb.erase(EraseRequest(scope: "user:ada"), as: .admin)
/// ```
public struct EraseRequest: KBRequest, Hashable {
    public var scope: String

    public init(scope: String) { self.scope = scope }

    public static let schemaName = "EraseRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [.string("scope", "The scope to erase: user:ID (its memories and the user's private sources), bot:NAME or global.",
                 required: true, pattern: Pattern.scope)]
    }


    public func validated(_ limits: Limits) throws -> MemoryScope {
        try MemoryScope(try FieldRules(Self.self, limits).text(scope, "scope"))
    }
}
