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
    private let base: UnsafeRawPointer
    private let mappedLength: Int
    private let dataStart: Int

    init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw KBError(.noSuchFile, "Cannot open the model weights \(path): \(String(cString: strerror(errno))).")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 8 else {
            throw KBError(.invalidModel, "\(path) is empty or unreadable; reinstall the model.")
        }
        let length = Int(info.st_size)
        guard let mapped = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else {
            throw KBError(.invalidModel, "Cannot memory-map \(path): \(String(cString: strerror(errno))).")
        }
        base = UnsafeRawPointer(mapped)
        mappedLength = length
        let headerLength = Int(base.loadUnaligned(as: UInt64.self).littleEndian)
        guard headerLength > 0, 8 + headerLength <= length else {
            munmap(mapped, length)
            throw KBError(.invalidModel, "\(path) is not a safetensors file (bad header length). Reinstall the model.")
        }
        dataStart = 8 + headerLength
        let header = Data(bytes: base + 8, count: headerLength)
        guard let json = try? JSONSerialization.jsonObject(with: header) as? [String: Any] else {
            munmap(mapped, length)
            throw KBError(.invalidModel, "\(path) has an unreadable safetensors header. Reinstall the model.")
        }
        var tensors: [String: Tensor] = [:]
        for (name, value) in json where name != "__metadata__" {
            guard let entry = value as? [String: Any], let dtype = entry["dtype"] as? String,
                  let shape = entry["shape"] as? [Int], let offsets = entry["data_offsets"] as? [Int], offsets.count == 2,
                  offsets[0] >= 0, offsets[1] >= offsets[0], dataStart + offsets[1] <= length else {
                munmap(mapped, length)
                throw KBError(.invalidModel, "\(path): tensor '\(name)' has a malformed entry. Reinstall the model.")
            }
            tensors[name] = Tensor(dtype: dtype, shape: shape, offset: offsets[0], byteCount: offsets[1] - offsets[0])
        }
        self.tensors = tensors
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: base), mappedLength) }

    /// Gives back the pages read so far and reads single pages from now on: after the encoder
    /// has copied its layers' weights into its own formats, only the embedding tables' rows of
    /// the tokens met are read again, and a page read ahead (or mapped around a fault) for each
    /// — 64 KiB a token in a 250,000-row table — would keep most of the table resident for
    /// nothing. The mapping is read-only, so its pages come back from the file when read again.
    func releasePages() {
        let start = UnsafeMutableRawPointer(mutating: base)
        _ = madvise(start, mappedLength, MADV_DONTNEED)
        _ = madvise(start, mappedLength, MADV_RANDOM)
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
