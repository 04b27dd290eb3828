"""The project's own tools, run from a checkout and not shipped with the package: the
behaviour comparison, the fuzzer, the DWARF code table generator and the ptxas-facts harness."""
