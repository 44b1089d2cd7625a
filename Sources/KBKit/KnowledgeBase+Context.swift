public import KBContext
public import KBCore
public import KBRequests

extension KnowledgeBase {
    /// Prompt context for a bot's turn or a report: knowledge snippets (only from the bot's own
    /// sources) and, for bots, memories of the scopes the bot may read, assembled within the
    /// budget. `reports` are the templates a request may name.
    ///
    /// A scoped token gets context only through its bots, for users of its scopes, and for
    /// reports with the right `reports`.
    public func context(_ request: ContextRequest, reports: [String: ReportTemplate] = [:], counter: any TokenCounter = ConservativeTokenCounter(),
                        options: ContextOptions = ContextOptions(), as caller: Caller) async throws -> ContextResponse {
        try await context(try request.checked(limits), reports: reports, counter: counter, options: options, as: caller)
    }

    /// As `context(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func context(_ checked: Checked<ContextRequest>, reports: [String: ReportTemplate] = [:], counter: any TokenCounter = ConservativeTokenCounter(),
                        options: ContextOptions = ContextOptions(), as caller: Caller) async throws -> ContextResponse {
        try await contexts.context(try inForce(checked), reports: reports, counter: counter, options: options, as: caller)
    }
}

extension KnowledgeBase {
    /// The report templates a caller may assemble context for (`GET /v1/reports`), by name: the
    /// admin's, or a scoped token's with the right `reports`.
    public func reportTemplates(_ reports: [String: ReportTemplate], as caller: Caller) throws -> [ReportTemplate] {
        try caller.require(.reports, writing: false, "list report templates")
        return reports.values.sorted { $0.name < $1.name }
    }
}
