"""DWARF: constants, record schemas, forms, section images, the DIE model, decoding, encoding
and location expressions. Imports nothing from the PTX or CUDA layers."""
