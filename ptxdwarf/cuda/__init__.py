"""CUDA binaries and tools: cubins (ELF with CUDA relocations), fatbins and host objects, ptxas."""
