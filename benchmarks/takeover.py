# SPDX-License-Identifier: Apache-2.0
"""Time taking over an upstream Placement 16.0.0 database of N nodes.

The database is built as upstream would leave it: benchmarks/cloud.py's
cloud written by the bulk SQL loader (benchmarks/sql_cloud.py), then
``placement-server db hand-back``, which leaves exactly the schema
upstream 16.0.0's ``db sync`` builds (tests/compat/test_schema.py proves
it) with the rows. Then ``placement-manage db sync`` takes it over, timed
as a whole command, and the usage totals it built are checked against
the allocations.

    python -m benchmarks.takeover --database-connection \\
        postgresql+psycopg://postgres@127.0.0.1/takeover_1000 --nodes 1000

The database must exist and be empty.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import sqlalchemy as sa

from benchmarks import sql_cloud

UPSTREAM_TABLES = (
    'resource_providers', 'inventories', 'allocations', 'consumers',
    'projects', 'users', 'consumer_types', 'resource_classes', 'traits',
    'resource_provider_traits', 'placement_aggregates',
    'resource_provider_aggregates')

# Rows whose usage total is missing or differs from the allocations' sum.
WRONG_TOTALS = """
SELECT count(*) FROM (
    SELECT resource_provider_id, resource_class_id, sum(used) AS used
    FROM allocations GROUP BY resource_provider_id, resource_class_id
) AS a LEFT JOIN usage_totals AS t
  ON t.resource_provider_id = a.resource_provider_id
 AND t.resource_class_id = a.resource_class_id
WHERE t.used IS NULL OR t.used <> a.used
"""


def _bin(name):
    return os.path.join(os.path.dirname(sys.executable), name)


def _config_file(connection, directory):
    path = os.path.join(directory, 'placement.conf')
    with open(path, 'w') as f:
        f.write('[placement_database]\nconnection = %s\n' % connection)
    return path


def row_counts(engine):
    with engine.connect() as conn:
        return {table: conn.execute(sa.text(
            'SELECT count(*) FROM %s' % table)).scalar()
            for table in UPSTREAM_TABLES}


def wrong_totals(engine):
    with engine.connect() as conn:
        return conn.execute(sa.text(WRONG_TOTALS)).scalar()


def build_upstream_database(connection, nodes, conf):
    sql_cloud.create_schema(connection)
    engine = sa.create_engine(connection)
    try:
        _, specs, batches = sql_cloud.build(nodes, seed=1)
        sql_cloud.write(engine, specs, batches)
    finally:
        engine.dispose()
    subprocess.run([_bin('placement-server'), '--config-file', conf, 'db',
                    'hand-back'], check=True)


def timed_takeover(conf):
    start = time.monotonic()
    subprocess.run([_bin('placement-manage'), '--config-file', conf, 'db',
                    'sync'], check=True)
    return time.monotonic() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--database-connection', required=True,
                        help='an empty database')
    parser.add_argument('--nodes', type=int, default=1000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        conf = _config_file(args.database_connection, directory)
        build_upstream_database(args.database_connection, args.nodes, conf)
        engine = sa.create_engine(args.database_connection)
        try:
            before = row_counts(engine)
            seconds = timed_takeover(conf)
            after = row_counts(engine)
            wrong = wrong_totals(engine)
        finally:
            engine.dispose()
    print('takeover of an upstream 16.0.0 database of %d nodes '
          '(placement-manage db sync, whole command): %.2f s'
          % (args.nodes, seconds))
    for table in UPSTREAM_TABLES:
        print('  %-30s %9d rows' % (table, after[table]))
    added = {t: after[t] - before[t] for t in UPSTREAM_TABLES
             if after[t] != before[t]}
    print('rows added by the takeover: %s' % (added or 'none'))
    print('usage totals differing from the allocations: %d' % wrong)
    return 1 if wrong else 0


if __name__ == '__main__':
    sys.exit(main())
