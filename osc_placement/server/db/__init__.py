"""Storage: tables, engines, transactions, migrations, start-up sync."""
