import Foundation
package import KBCore
#if canImport(Glibc)
import Glibc
#endif

/// What the file system said happened under watched folders, gathered between two reads.
package struct FileChanges: Sendable, Equatable {
    /// Files written, created or moved in.
    package var changed: Set<String> = []
    /// Files and folders deleted or moved out.
    package var gone: Set<String> = []
    /// Folders created or moved in (their files are read by scanning them).
    package var newFolders: Set<String> = []
    /// The kernel's queue overflowed: events were lost, so every folder is scanned again.
    package var overflowed = false
    /// How many events these are.
    package var events = 0

    package init(changed: Set<String> = [], gone: Set<String> = [], newFolders: Set<String> = [], overflowed: Bool = false, events: Int = 0) {
        (self.changed, self.gone, self.newFolders, self.overflowed, self.events) = (changed, gone, newFolders, overflowed, events)
    }

    package var isEmpty: Bool { changed.isEmpty && gone.isEmpty && newFolders.isEmpty && !overflowed }

    package mutating func merge(_ other: FileChanges) {
        // A later event wins: a file deleted then written again is changed, and the reverse gone.
        gone.subtract(other.changed)
        changed.subtract(other.gone)
        changed.formUnion(other.changed)
        gone.formUnion(other.gone)
        newFolders.formUnion(other.newFolders)
        overflowed = overflowed || other.overflowed
        events += other.events
    }
}

/// Linux inotify over folder trees: a watch on every folder (hidden ones skipped), new folders
/// watched as they appear, events read on a thread of its own (never the cooperative pool) and
/// handed to `deliver` a read at a time. Where inotify is missing, `start` fails and the watcher
/// relies on its periodic rescan.
///
/// @unchecked Sendable: the descriptor and the watch table are used under `lock`; the reading
/// thread is the only reader of the descriptor.
package final class FileEvents: @unchecked Sendable {
    package init() {}

    private let lock = NSLock()
    private var descriptor: Int32 = -1
    private var folders: [Int32: String] = [:]
    private var stopped = false
    private var reader: Thread?
    /// A test's way to let the kernel's queue fill (and overflow): events wait while it is set;
    /// `readerPaused` says the reader has seen it (no read is under way).
    package let paused = LockedValue(false)
    package let readerPaused = LockedValue(false)

    #if canImport(Glibc)
    private static let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)
    #endif

    /// Starts watching `roots` (and every folder under them); events go to `deliver`, on the
    /// reading thread.
    package func start(_ roots: [String], deliver: @escaping @Sendable (FileChanges) -> Void) throws {
        #if canImport(Glibc)
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            throw KBError(.unreadableFile, "Cannot watch folders: inotify failed (\(String(cString: strerror(errno)))). Raise fs.inotify.max_user_instances, or re-run kb ingest instead.")
        }
        lock.withLock { descriptor = fd }
        for root in roots { try watchTree(root) }
        let thread = Thread { [self] in read(fd, deliver: deliver) }
        thread.name = "kb inotify"
        thread.stackSize = 1 << 20
        lock.withLock { reader = thread }
        thread.start()
        #else
        throw KBError(.unreadableFile, "Folder events are read with Linux inotify; here the watcher rescans its folders periodically instead.")
        #endif
    }

    /// Stops reading and closes the descriptor (the reading thread ends within half a second).
    package func stop() {
        lock.withLock { stopped = true }
    }

    /// How many folders are watched.
    package var watchedFolders: Int { lock.withLock { folders.count } }

    /// Adds a watch on `root` and every folder under it, hidden ones skipped.
    package func watchTree(_ root: String) throws {
        #if canImport(Glibc)
        var pending = [root]
        while let folder = pending.popLast() {
            let fd = lock.withLock { descriptor }
            let wd = inotify_add_watch(fd, folder, Self.mask)
            guard wd >= 0 else {
                let reason = String(cString: strerror(errno))
                if folder == root || errno == ENOSPC {
                    throw KBError(.unreadableFile, "Cannot watch \(folder): \(reason)."
                        + (errno == ENOSPC ? " Raise fs.inotify.max_user_watches (sysctl), or watch fewer folders." : ""))
                }
                continue   // a folder gone meanwhile
            }
            lock.withLock { folders[wd] = folder }
            let children = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for child in children where !child.hasPrefix(".") {
                var isFolder: ObjCBool = false
                let path = folder + "/" + child
                if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue { pending.append(path) }
            }
        }
        #endif
    }

    #if canImport(Glibc)
    /// Removes the watches of `root` and every folder under it.
    private func unwatchTree(_ root: String) {
        lock.withLock {
            for (wd, folder) in folders where folder == root || folder.hasPrefix(root + "/") {
                inotify_rm_watch(descriptor, wd)
                folders[wd] = nil
            }
        }
    }

    private func read(_ fd: Int32, deliver: @Sendable (FileChanges) -> Void) {
        let size = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer {
            buffer.deallocate()
            close(fd)
        }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while !lock.withLock({ stopped }) {
            if paused.withLock({ $0 }) {
                readerPaused.withLock { $0 = true }
                usleep(20_000)
                continue
            }
            readerPaused.withLock { $0 = false }
            guard poll(&poller, 1, 500) > 0 else { continue }
            let count = Glibc.read(fd, buffer, size)
            guard count > 0 else { continue }
            var changes = FileChanges()
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameStart = offset + MemoryLayout<inotify_event>.size
                let name = event.len > 0
                    ? String(cString: buffer.advanced(by: nameStart).assumingMemoryBound(to: CChar.self)) : ""
                offset = nameStart + Int(event.len)
                changes.events += 1
                handle(event, name: name, into: &changes)
            }
            if !changes.isEmpty { deliver(changes) }
        }
    }

    private func handle(_ event: inotify_event, name: String, into changes: inout FileChanges) {
        let mask = event.mask
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            changes.overflowed = true
            return
        }
        if mask & UInt32(IN_IGNORED) != 0 {
            _ = lock.withLock { folders.removeValue(forKey: event.wd) }
            return
        }
        guard let folder = lock.withLock({ folders[event.wd] }) else { return }
        if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
            changes.gone.insert(folder)
            return
        }
        guard !name.isEmpty, !name.hasPrefix(".") || name == ".kbignore" else { return }
        let path = folder + "/" + name
        let isFolder = mask & UInt32(IN_ISDIR) != 0
        if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
            // A folder moved away is still watched where it went: its events must not come back
            // under its old path.
            if isFolder, mask & UInt32(IN_MOVED_FROM) != 0 { unwatchTree(path) }
            changes.merge(FileChanges(gone: [path]))
        } else if isFolder, mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
            try? watchTree(path)
            changes.merge(FileChanges(newFolders: [path]))
        } else if !isFolder, mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0 {
            changes.merge(FileChanges(changed: [path]))
        }
    }
    #endif
}
