"""Small builders for tests, examples and docs: tiny models and tiny datasets made on the fly, fakes
of a GPU, a clock and a chat server, so nothing needs the network. Shipped in the library so users
can test plug-ins too; the simulators only benchmarks use are in ``benchmarks/sim/`` (not shipped)."""
