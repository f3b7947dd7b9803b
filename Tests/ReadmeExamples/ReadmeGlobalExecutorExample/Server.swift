import Bolts

@main
struct Server {
    static func main() async throws {
        guard ThreadPool.shared.unsafeTryInstallAsConcurrencyGlobalExecutor() else {
            fatalError("the pool could not become the global executor")
        }
        // Build and run the server: its tasks run on the pool.
    }
}
