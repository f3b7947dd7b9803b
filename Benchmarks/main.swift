// Placeholder: replaced by the benchmark harness.
print("Benchmarks are not written yet.")
