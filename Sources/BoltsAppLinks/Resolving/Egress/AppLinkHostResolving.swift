import Bolts
import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns a host name into the addresses a connection to it could use, so that the egress policy can judge them
/// before anything connects.
///
/// The resolver asks this for every host name it is about to fetch from (address literals are not looked up).
/// Tests and servers with their own DNS can plug in their own; ``SystemAppLinkHostResolver`` asks the system.
public protocol AppLinkHostResolving: Sendable {
    /// Resolves `host` (a name, without brackets or port). The task succeeds with every address the name has
    /// (an empty list is treated as a failure), or faults with the lookup's error. Cancelling `cancellationToken`
    /// may end the task cancelled; an implementation that cannot stop a lookup may ignore it (the resolver stops
    /// waiting anyway).
    func addresses(forHost host: String, cancellationToken: CancellationToken?) -> Task<[AppLinkIPAddress]>
}

/// A host name lookup that failed.
public struct AppLinkHostLookupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name that was looked up.
    public let host: String
    /// What the system said (for example "Name or service not known"), or why the answer was unusable.
    public let reason: String

    /// Creates an error.
    public init(host: String, reason: String) {
        self.host = host
        self.reason = reason
    }

    /// "Cannot resolve host "<host>": <reason>".
    public var description: String {
        "Cannot resolve host \"\(host)\": \(reason)"
    }
}

/// Host lookup with the system's `getaddrinfo`: the hosts file, DNS and whatever else the system is configured
/// for, the same lookup the `URLSession` client makes (so shorthand IPv4 forms such as `127.1` resolve as the
/// client would read them).
///
/// `getaddrinfo` blocks, so each lookup runs on a Dispatch queue of its own module (never the caller's thread);
/// the task completes there. It cannot be interrupted: cancelling ends the task at once and the lookup's answer
/// is dropped when it comes.
public struct SystemAppLinkHostResolver: AppLinkHostResolving {
    /// Creates a resolver.
    public init() {}

    /// Looks `host` up for TCP, both families; see ``AppLinkHostResolving``.
    public func addresses(forHost host: String, cancellationToken: CancellationToken?) -> Task<[AppLinkIPAddress]> {
        if cancellationToken?.isCancellationRequested == true { return .cancelledTask() }
        let source = TaskCompletionSource<[AppLinkIPAddress]>()
        let registration = cancellationToken?.register { source.tryCancel() }
        hostLookupQueue.async {
            defer { registration?.dispose() }
            guard !source.task.isCompleted else { return }
            switch Self.lookUp(host) {
            case .success(let addresses): source.trySet(result: addresses)
            case .failure(let error): source.trySet(error: error)
            }
        }
        return source.task
    }

    /// The blocking lookup.
    static func lookUp(_ host: String) -> Result<[AppLinkIPAddress], AppLinkHostLookupError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else {
            return .failure(AppLinkHostLookupError(host: host, reason: String(cString: gai_strerror(status))))
        }
        defer { freeaddrinfo(list) }
        var addresses: [AppLinkIPAddress] = []
        var cursor = list
        while let entry = cursor?.pointee {
            defer { cursor = entry.ai_next }
            guard let socketAddress = entry.ai_addr else { continue }
            let address: AppLinkIPAddress?
            switch entry.ai_family {
            case AF_INET:
                address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    AppLinkIPAddress(ipv4: UInt32(bigEndian: $0.pointee.sin_addr.s_addr))
                }
            case AF_INET6:
                address = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    withUnsafeBytes(of: $0.pointee.sin6_addr) { AppLinkIPAddress(bytes: $0) }
                }
            default:
                address = nil
            }
            if let address, !addresses.contains(address) { addresses.append(address) }
        }
        guard !addresses.isEmpty else {
            return .failure(AppLinkHostLookupError(host: host, reason: "no IPv4 or IPv6 address"))
        }
        return .success(addresses)
    }
}

/// Where blocking lookups run: a concurrent queue of the module's own, so that a slow DNS server holds up only
/// the lookups, never a caller's thread.
private let hostLookupQueue = DispatchQueue(label: "bolts.applinks.host-lookup", attributes: .concurrent)
