// Placeholder so the package loads; replaced by the module's real sources.
