extension String {
    /// Whether this is a path from the root: its first Unicode scalar is `/`. (`hasPrefix("/")`
    /// compares characters, and a combining mark after the slash makes a different character.)
    public var isAbsolutePath: Bool { unicodeScalars.first == "/" }
}

extension String {
    /// This path as the prefix of everything inside it: with one trailing "/".
    public var folderPrefix: String { hasSuffix("/") ? self : self + "/" }
}
