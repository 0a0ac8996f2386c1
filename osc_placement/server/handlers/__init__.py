# SPDX-License-Identifier: Apache-2.0
"""HTTP <-> domain: one module per resource family."""
