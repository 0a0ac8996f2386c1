# SPDX-License-Identifier: Apache-2.0
"""Storage: tables, engines, transactions, migrations, start-up sync."""
