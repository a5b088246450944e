"""What the tests share: golden cases, the side-by-side harness, tracer drivers, the fuzzers."""
