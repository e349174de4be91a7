"""Small builders for tests, examples and benchmarks: tiny models and tiny datasets made on
the fly, so nothing needs the network. Shipped in the library so users can test plug-ins too."""
