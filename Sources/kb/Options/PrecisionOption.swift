import ArgumentParser
import Foundation
import KBCore
import KBKit

/// `--precision`, shared by every command that may load the local model.
struct PrecisionOption: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The local model's arithmetic: auto (the default: the precision the index records; a new index int8 where the CPU has AVX-512 VNNI, else bf16 where it has AVX-512 BF16, else fp32), fp32, bf16 or int8. Vectors of every precision may share one index. $KB_PRECISION overrides it.",
        valueName: "precision"))
    var precision: String?

    /// Parsing chooses the precision the process's model loads with (before anything loads it).
    mutating func validate() throws {
        guard let precision else { return }
        do {
            ProcessPrecision.set(try EncoderPrecision(parsing: precision))
        } catch let error as KBError {
            throw ValidationError(error.message)
        }
    }
}
