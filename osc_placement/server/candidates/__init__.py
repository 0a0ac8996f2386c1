# SPDX-License-Identifier: Apache-2.0
"""The allocation candidate engine behind ``GET /allocation_candidates``.

The way in is door.answer, handed the worker's engine.CandidateEngine,
the one object that keeps what the engine remembers between requests.
doc/source/contributor/architecture.rst describes every module.
"""
