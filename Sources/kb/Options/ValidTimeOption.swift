import ArgumentParser

/// A memory's valid time, as `kb memory add` and `update` take it (ISO 8601 dates or times).
struct ValidTimeOption: ParsableArguments {
    @Option(name: .customLong("valid-from"), help: ArgumentHelp("When it became true (ISO 8601 date or time; a new memory: now by default).", valueName: "time"))
    var validFrom: String?

    @Option(name: .customLong("valid-to"), help: ArgumentHelp("When it stopped being true (ISO 8601).", valueName: "time"))
    var validTo: String?

    @Option(name: .customLong("expires"), help: ArgumentHelp("When it stops mattering (ISO 8601): left out of recall and context from then on.", valueName: "time"))
    var expiresAt: String?
}
