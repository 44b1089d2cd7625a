import Foundation
import KBCore
#if canImport(Glibc)
import Glibc
#endif

/// A memory-mapped `.safetensors` file: a JSON header naming tensors, then their raw bytes.
/// Only little-endian float32 tensors can be read as floats.
///
/// @unchecked Sendable: the mapping is read-only and lives until `deinit`.
final class SafeTensors: @unchecked Sendable {
    struct Tensor {
        var dtype: String
        var shape: [Int]
        var offset: Int
        var byteCount: Int
    }

    let path: String
    let tensors: [String: Tensor]
    private let file: MappedFile
    private var base: UnsafeRawPointer { file.base }
    private let dataStart: Int

    init(path: String) throws {
        self.path = path
        file = try MappedFile(path: path, minimumLength: 9) { failure in
            if case .unopenable(let reason) = failure { return KBError(.noSuchFile, "Cannot open the model weights \(path): \(reason).") }
            return KBError(.invalidModel, "The model weights \(path) \(failure); reinstall the model.")
        }
        let length = file.length
        let headerLength = Int(file.base.loadUnaligned(as: UInt64.self).littleEndian)
        guard headerLength > 0, 8 + headerLength <= length else {
            throw KBError(.invalidModel, "\(path) is not a safetensors file (bad header length). Reinstall the model.")
        }
        dataStart = 8 + headerLength
        let header = Data(bytes: file.base + 8, count: headerLength)
        guard let json = try? JSONSerialization.jsonObject(with: header) as? [String: Any] else {
            throw KBError(.invalidModel, "\(path) has an unreadable safetensors header. Reinstall the model.")
        }
        var tensors: [String: Tensor] = [:]
        for (name, value) in json where name != "__metadata__" {
            guard let entry = value as? [String: Any], let dtype = entry["dtype"] as? String,
                  let shape = entry["shape"] as? [Int], let offsets = entry["data_offsets"] as? [Int], offsets.count == 2,
                  offsets[0] >= 0, offsets[1] >= offsets[0], dataStart + offsets[1] <= length else {
                throw KBError(.invalidModel, "\(path): tensor '\(name)' has a malformed entry. Reinstall the model.")
            }
            tensors[name] = Tensor(dtype: dtype, shape: shape, offset: offsets[0], byteCount: offsets[1] - offsets[0])
        }
        self.tensors = tensors
    }

    /// Gives back the pages read so far and reads single pages from now on: after the encoder
    /// has copied its layers' weights into its own formats, only the embedding tables' rows of
    /// the tokens met are read again, and a page read ahead (or mapped around a fault) for each
    /// — 64 KiB a token in a 250,000-row table — would keep most of the table resident for
    /// nothing. The mapping is read-only, so its pages come back from the file when read again.
    func releasePages() {
        file.advise(MADV_DONTNEED)
        file.advise(MADV_RANDOM)
    }

    /// The float32 values of a tensor, checked against the expected shape.
    func floats(_ name: String, shape expected: [Int]) throws -> UnsafeBufferPointer<Float> {
        guard let tensor = tensors[name] else {
            throw KBError(.invalidModel, "\(path) has no tensor '\(name)'. Is this a BERT-architecture model?")
        }
        guard tensor.dtype == "F32" else {
            throw KBError(.invalidModel, "\(path): tensor '\(name)' is \(tensor.dtype); kb reads float32 (F32) weights only.")
        }
        guard tensor.shape == expected else {
            throw KBError(.invalidModel,
                "\(path): tensor '\(name)' has shape \(tensor.shape) but config.json implies \(expected). The model files do not belong together.")
        }
        let count = expected.reduce(1, *)
        guard tensor.byteCount == count * 4 else {
            throw KBError(.invalidModel, "\(path): tensor '\(name)' holds \(tensor.byteCount) bytes, expected \(count * 4).")
        }
        let pointer = base + dataStart + tensor.offset
        if Int(bitPattern: pointer) % MemoryLayout<Float>.alignment == 0 {
            return UnsafeBufferPointer(start: pointer.assumingMemoryBound(to: Float.self), count: count)
        }
        // Misaligned data: copy once into aligned memory that lives as long as the process.
        let copy = UnsafeMutableBufferPointer<Float>.allocate(capacity: count)
        memcpy(copy.baseAddress!, pointer, count * 4)
        return UnsafeBufferPointer(copy)
    }
}
