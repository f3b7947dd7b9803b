import BoltsAppLinks
import BoltsAppLinksNIO
import Foundation

// Refuses any request that carries no checked addresses, rather than looking its host up.
let fetcher = try NIOAppLinkFetcher(configuration: .init(requirePinnedAddresses: true))
let resolver = CachingAppLinkResolver(wrapping: HTMLAppLinkResolver(fetcher: fetcher))
let link = try await resolver.appLink(from: URL(string: "https://example.com/item/42")!, platform: .android).value
