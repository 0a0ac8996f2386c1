"""HTTP <-> domain: one module per resource family."""
