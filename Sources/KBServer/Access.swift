import KBKit

/// Who is asking, for the request being answered: set by `AuthMiddleware` for the handler's task,
/// passed to every KBKit request (KBKit decides what the caller may do).
enum Access {
    @TaskLocal static var caller: Caller = .admin
}
