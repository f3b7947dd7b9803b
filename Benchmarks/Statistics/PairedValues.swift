#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The values of one comparison on one metric, round by round: the subject's, the peer's and
/// the peer's twin (the peer measured a second time in the same round, for the A/A). Index
/// `i` of every array belongs to the same round, `round[i]`; a round without a twin holds 0
/// there, which every ratio below skips.
package struct PairedValues: Sendable {
    package var subject: [Double] = []
    package var peer: [Double] = []
    package var twin: [Double] = []
    /// Which of peer and twin is the A/A's numerator in each round
    /// (`PairedStatistics.twinFirst(inRound:)`).
    package var twinFirst: [Bool] = []
    /// Whether the noise probe flagged each round.
    package var contaminated: [Bool] = []
    /// Each value's round number within its comparison.
    package var round: [Int] = []

    package init() {}

    /// Adds round `round`'s pair (and the peer's twin, when the round has one), with the
    /// A/A's order that the twin-order rule gives that round.
    package mutating func append(round: Int, subject: Double, peer: Double, twin: Double?) {
        self.subject.append(subject)
        self.peer.append(peer)
        self.twin.append(twin ?? 0)
        twinFirst.append(PairedStatistics.twinFirst(inRound: round))
        self.round.append(round)
    }

    /// Marks each value's round as flagged or not: `flagged[r]` is round r's flag (rounds
    /// beyond it count as clean).
    package mutating func markContaminated(_ flagged: [Bool]) {
        contaminated = round.map { $0 < flagged.count && flagged[$0] }
    }

    /// Per round: log(peer ÷ subject) for a lower-is-better metric (the geometric mean of
    /// peer and twin when there is a twin), log(subject ÷ peer) otherwise.
    package func logRatios(lowerIsBetter: Bool) -> [Double] {
        subject.indices.compactMap { index in
            let subjectValue = subject[index]
            guard subjectValue > 0, index < peer.count, peer[index] > 0 else { return nil }
            var peerLog = log(peer[index])
            if index < twin.count, twin[index] > 0 { peerLog = (peerLog + log(twin[index])) / 2 }
            let difference = peerLog - log(subjectValue)
            return lowerIsBetter ? difference : -difference
        }
    }

    /// Per round: the peer against its twin, in the order drawn for that round.
    package var aaLogRatios: [Double] {
        peer.indices.compactMap { index in
            guard index < twin.count, peer[index] > 0, twin[index] > 0 else { return nil }
            let difference = log(peer[index]) - log(twin[index])
            return index < twinFirst.count && twinFirst[index] ? -difference : difference
        }
    }
}

extension PairedStatistics {
    /// The twin-order rule: whether, in round `round` of a comparison, the A/A divides the
    /// twin by the peer (true) or the peer by the twin. Peer and twin are the same code in
    /// randomly ordered positions, so either order is as good; alternating them unevenly
    /// keeps a bias of whichever is labelled "twin" out of the A/A. The order comes from the
    /// round number alone (bit 8 of a multiplicative hash), not from the rounds' generator,
    /// so that every subject of a comparison shares it and the round orders do not depend
    /// on it.
    package static func twinFirst(inRound round: Int) -> Bool {
        (round &* 2_654_435_761) & 0x100 != 0
    }
}
