import Foundation

/// A measurement event: a name and string arguments, as Bolts posted them for analytics.
///
/// Events are posted on `NotificationCenter.default` under ``notificationName`` with the user-info keys
/// ``eventNameKey`` (a `String`) and ``eventArgsKey`` (a `[String: String]`), exactly as Bolts did, so existing
/// listeners keep working. Swift code can use ``addObserver(_:)`` instead.
public struct AppLinkMeasurementEvent: Sendable, Hashable {
    /// The notification name every event is posted under: `com.parse.bolts.measurement_event`.
    public static let notificationName = Notification.Name("com.parse.bolts.measurement_event")
    /// The user-info key of the event name: `event_name`.
    public static let eventNameKey = "event_name"
    /// The user-info key of the event arguments: `event_args`.
    public static let eventArgsKey = "event_args"

    /// `al_link_parse`: an inbound URL with an accepted `al_applink_data` payload was parsed.
    public static let linkParse = "al_link_parse"
    /// `al_nav_in`: an inbound URL was opened from another app (in addition to `al_link_parse`).
    public static let navigateIn = "al_nav_in"
    /// `al_nav_out`: a navigation to an App Link finished, whatever its outcome.
    public static let navigateOut = "al_nav_out"
    /// `al_ref_back_out`: a navigation back to the referer finished, whatever its outcome.
    public static let navigateBackToReferer = "al_ref_back_out"

    /// The event's name, such as ``navigateOut``.
    public var name: String
    /// The event's arguments.
    public var args: [String: String]

    /// Creates an event value (it is not posted until ``post(name:args:)`` is called).
    public init(name: String, args: [String: String]) {
        self.name = name
        self.args = args
    }

    /// Reads an event from a notification, or returns nil when the notification is not a measurement event.
    public init?(notification: Notification) {
        guard notification.name == Self.notificationName,
            let name = notification.userInfo?[Self.eventNameKey] as? String
        else { return nil }
        self.name = name
        self.args = notification.userInfo?[Self.eventArgsKey] as? [String: String] ?? [:]
    }

    /// Posts an event synchronously on the calling thread; observers run before this returns.
    ///
    /// An empty name is not posted (Bolts dropped events without a name).
    public static func post(name: String, args: [String: String]) {
        guard !name.isEmpty else { return }
        let userInfo: [AnyHashable: Any] = [eventNameKey: name, eventArgsKey: args]
        NotificationCenter.default.post(name: notificationName, object: nil, userInfo: userInfo)
    }

    /// Calls `handler` for every measurement event posted from now on, on the posting thread, until the
    /// returned observation is cancelled or deallocated. Keep the observation for as long as you want events.
    public static func addObserver(
        _ handler: @escaping @Sendable (AppLinkMeasurementEvent) -> Void
    ) -> AppLinkMeasurementObservation {
        let token = NotificationCenter.default.addObserver(forName: notificationName, object: nil, queue: nil) {
            notification in
            if let event = AppLinkMeasurementEvent(notification: notification) {
                handler(event)
            }
        }
        return AppLinkMeasurementObservation(token: token)
    }
}

/// A registration made by ``AppLinkMeasurementEvent/addObserver(_:)``. Events stop at ``cancel()`` or when the
/// observation is deallocated, whichever comes first.
///
/// Safety (why `@unchecked Sendable` holds): the only stored state is `token`, an opaque observer handle that is
/// read only inside `state.withLock`, and handed to `NotificationCenter.removeObserver`, which is thread-safe.
/// `Locked` serializes the read-and-clear, so the observer is removed exactly once.
public final class AppLinkMeasurementObservation: @unchecked Sendable {
    private let state: Locked<Bool>
    private let token: any NSObjectProtocol

    init(token: any NSObjectProtocol) {
        self.token = token
        self.state = Locked(false)
    }

    /// Stops delivering events to the handler. Calling it again does nothing.
    public func cancel() {
        let alreadyCancelled = state.withLock { cancelled in
            defer { cancelled = true }
            return cancelled
        }
        if !alreadyCancelled {
            NotificationCenter.default.removeObserver(token)
        }
    }

    deinit {
        cancel()
    }
}
