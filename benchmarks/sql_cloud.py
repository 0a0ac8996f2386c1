"""Write benchmarks/cloud.py's cloud straight into our server's database.

The same seed gives the same providers, uuids and consumers as the HTTP
population (``python -m benchmarks.candidates``), so query figures compare
with a server populated over HTTP. Use it while the allocation routes are
missing, or for 10,000-node clouds that take long to load over HTTP:

    python -m benchmarks.sql_cloud --database-connection \\
        postgresql+psycopg://postgres@127.0.0.1/ours_bench --nodes 1000 \\
        --state /tmp/ours1000.json
    python -m benchmarks.candidates --url http://127.0.0.1:8779 \\
        --no-populate --state /tmp/ours1000.json --loop-seconds 0
"""

import argparse
import random
import sys
import time

import sqlalchemy as sa

from benchmarks import candidates
from benchmarks import cloud as cloud_builder
from osc_placement.server.db import engine as db_engine
from osc_placement.server.db import migration
from osc_placement.server.db import structure
from osc_placement.server.db import sync
from osc_placement.server.db import tables
from osc_placement.server.objects import resource_class
from osc_placement.server.objects import usage_totals

MAX_INT = 2 ** 31 - 1


def build(nodes, seed):
    """The provider specs and allocation batches cloud.build would send."""
    rng = random.Random(seed)
    cloud = cloud_builder.Cloud()
    specs = cloud_builder._provider_specs(nodes, rng, cloud)
    cloud.providers = len(specs)
    batches = cloud_builder._allocation_batches(specs, rng, cloud)
    return cloud, specs, batches


def _provider_rows(specs):
    ids = {spec['uuid']: i for i, spec in enumerate(specs, 1)}
    rows = []
    for spec in specs:
        parent = ids.get(spec.get('parent'))
        rows.append({'id': ids[spec['uuid']], 'uuid': spec['uuid'],
                     'name': spec['name'], 'generation': 1,
                     'parent_provider_id': parent,
                     'root_provider_id': parent or ids[spec['uuid']],
                     'created_at': tables.utcnow()})
    return ids, rows


def _inventory_rows(specs, ids):
    return [{'resource_provider_id': ids[spec['uuid']],
             'resource_class_id': resource_class.STANDARD_IDS[rc],
             'total': inv['total'], 'reserved': 0, 'min_unit': 1,
             'max_unit': MAX_INT, 'step_size': 1,
             'allocation_ratio': inv.get('allocation_ratio', 1.0)}
            for spec in specs for rc, inv in spec['inventories'].items()]


def _link_rows(conn, specs, ids):
    traits = dict(conn.execute(sa.select(tables.traits.c.name,
                                         tables.traits.c.id)).all())
    aggs = sorted({a for spec in specs for a in spec.get('aggregates', ())})
    agg_ids = {agg: i for i, agg in enumerate(aggs, 1)}
    conn.execute(tables.placement_aggregates.insert(),
                 [{'id': i, 'uuid': a} for a, i in agg_ids.items()])
    conn.execute(tables.resource_provider_traits.insert(), [
        {'resource_provider_id': ids[spec['uuid']], 'trait_id': traits[t]}
        for spec in specs for t in spec.get('traits', ())])
    conn.execute(tables.resource_provider_aggregates.insert(), [
        {'resource_provider_id': ids[spec['uuid']],
         'aggregate_id': agg_ids[a]}
        for spec in specs for a in spec.get('aggregates', ())])


def _consumer_rows(conn, batches, ids):
    people = {}
    consumers, allocations = [], []
    for batch in batches:
        for consumer, body in batch.items():
            for key, table in (('project_id', tables.projects),
                               ('user_id', tables.users)):
                if body[key] not in people:
                    people[body[key]] = conn.execute(table.insert().values(
                        external_id=body[key])).inserted_primary_key[0]
            consumers.append({'uuid': consumer, 'generation': 1,
                              'project_id': people[body['project_id']],
                              'user_id': people[body['user_id']]})
            allocations.extend(
                {'resource_provider_id': ids[rp], 'consumer_id': consumer,
                 'resource_class_id': resource_class.STANDARD_IDS[rc],
                 'used': used}
                for rp, item in body['allocations'].items()
                for rc, used in item['resources'].items())
    conn.execute(tables.consumers.insert(), consumers)
    usage_totals.insert_allocations(conn, allocations)


def write(engine, specs, batches):
    ids, providers = _provider_rows(specs)
    with engine.begin() as conn:
        # Roots first: the self and parent references are foreign keys.
        conn.execute(tables.resource_providers.insert(), providers)
        conn.execute(tables.inventories.insert(),
                     _inventory_rows(specs, ids))
        _link_rows(conn, specs, ids)
        _consumer_rows(conn, batches, ids)
        # A server already running must not keep the structure it read.
        structure.write_new_stamp(conn)
    if engine.dialect.name == 'postgresql':
        # Explicit ids leave the sequence behind; and give the planner
        # fresh statistics, as autovacuum would shortly.
        with engine.connect() as conn:
            conn.execute(sa.text(
                "SELECT setval('resource_providers_id_seq', "
                "(SELECT max(id) FROM resource_providers))"))
            conn.commit()
            conn.execution_options(isolation_level='AUTOCOMMIT').execute(
                sa.text('ANALYZE'))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--database-connection', required=True,
                        help='an empty database (the schema is created)')
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--state', required=True)
    args = parser.parse_args(argv)
    engine = db_engine.create_engine(args.database_connection)
    migration.upgrade(engine)
    sync.sync_standards(db_engine.Database(engine))
    start = time.monotonic()
    cloud, specs, batches = build(args.nodes, args.seed)
    write(engine, specs, batches)
    candidates.save_cloud(args.state, cloud)
    print('%d providers, %d consumers, %d allocation rows in %.1f s' % (
        cloud.providers, cloud.consumers, cloud.allocation_rows,
        time.monotonic() - start))
    return 0


if __name__ == '__main__':
    sys.exit(main())
