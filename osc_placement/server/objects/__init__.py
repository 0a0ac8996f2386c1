# SPDX-License-Identifier: Apache-2.0
"""Domain logic and its SQL. Functions take a Connection that is already
inside the request's transaction."""
