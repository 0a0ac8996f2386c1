# SPDX-License-Identifier: Apache-2.0
"""The candidate tests' cloud on the test database.

Small random clouds (tests/unit/server/test_candidate_properties.py's
strategies) are written to the test database with SQL; requests go
through the whole WSGI app (or candidates.door.answer) and answers are
compared with the brute-force oracle's. Runs on whichever database
OSC_PLACEMENT_TEST_DB_URL names (SQLite by default). The tests are in
test_candidate_api.py, test_candidate_fetch.py,
test_resource_provider_filters.py and test_candidate_generation.py.
"""

import urllib.parse

import hypothesis
from hypothesis import strategies as st
import orjson
import sqlalchemy as sa
import testtools
import webob

from osc_placement.server import app as app_mod
from osc_placement.server.candidates import engine as candidate_engine
from osc_placement.server.candidates import policy
from osc_placement.server.candidates import snapshot as cn
from osc_placement.server import conf as conf_mod
from osc_placement.server.db import tables
from osc_placement.server.objects import resource_class
from osc_placement.server.schemas import allocation_candidate as ac_schema
from osc_placement.server.schemas import request_groups as rg
from tests.server import fixtures
from tests.unit.server import candidate_oracle
from tests.unit.server import test_candidate_properties as props

# Each example rewrites the database: keep the count modest.
SETTINGS = hypothesis.settings(
    props.SETTINGS, max_examples=40,
    suppress_health_check=list(hypothesis.HealthCheck))


def write_cloud(db, cloud):
    """Insert ``cloud`` (a candidate_oracle.Cloud) with plain SQL."""
    fixtures.reset_database(db)
    with db.write() as conn:
        trait_ids = _traits(conn)
        agg_ids = {agg: fixtures._insert_id(conn, tables.placement_aggregates,
                                            uuid=agg)
                   for agg in props.AGGS}
        ids = {}
        # Parents have lower indexes than their children (see clouds()).
        for uuid in cloud.providers:
            ids[uuid] = _provider(conn, cloud, uuid, ids)
            _provider_rows(conn, cloud, uuid, ids[uuid], trait_ids, agg_ids)


def _traits(conn):
    for name in props.TRAITS:
        fixtures._insert_id(conn, tables.traits, name=name)
    rows = conn.execute(tables.traits.select().where(tables.traits.c.name.in_(
        props.TRAITS + [cn.SHARING_TRAIT]))).mappings()
    return {row['name']: row['id'] for row in rows}


def _provider(conn, cloud, uuid, ids):
    parent = cloud.parent[uuid]
    rp_id = fixtures._insert_id(
        conn, tables.resource_providers, uuid=uuid, name='name-' + uuid,
        generation=0, parent_provider_id=ids.get(parent),
        root_provider_id=ids.get(cloud.root(uuid)))
    if parent is None:
        conn.execute(tables.resource_providers.update()
                     .where(tables.resource_providers.c.id == rp_id)
                     .values(root_provider_id=rp_id))
    return rp_id


def _provider_rows(conn, cloud, uuid, rp_id, trait_ids, agg_ids):
    for rc, inv in cloud.inventory[uuid].items():
        class_id = resource_class.STANDARD_IDS[rc]
        total, reserved, min_unit, max_unit, step, ratio = inv
        fixtures._insert_id(
            conn, tables.inventories, resource_provider_id=rp_id,
            resource_class_id=class_id, total=total, reserved=reserved,
            min_unit=min_unit, max_unit=max_unit, step_size=step,
            allocation_ratio=ratio)
        used = cloud.used_of(uuid, rc)
        if used:
            conn.execute(tables.allocations.insert(), [{
                'resource_provider_id': rp_id,
                'consumer_id': 'c-' + uuid[-12:],
                'resource_class_id': class_id, 'used': used}])
    for name in cloud.traits[uuid]:
        conn.execute(tables.resource_provider_traits.insert().values(
            resource_provider_id=rp_id, trait_id=trait_ids[name]))
    for agg in cloud.aggs[uuid]:
        conn.execute(tables.resource_provider_aggregates.insert().values(
            resource_provider_id=rp_id, aggregate_id=agg_ids[agg]))


def rewrite_usage(db, cloud):
    """Replace every allocation with ``cloud.used``, as claims would:
    allocations and usage totals only."""
    with db.write() as conn:
        conn.execute(tables.allocations.delete())
        rp = tables.resource_providers
        ids = dict(conn.execute(sa.select(rp.c.uuid, rp.c.id)).all())
        rows = [
            {'resource_provider_id': ids[uuid], 'consumer_id': 'c-' + rc,
             'resource_class_id': resource_class.STANDARD_IDS[rc],
             'used': used}
            for uuid, classes in cloud.used.items()
            for rc, used in classes.items() if used]
        if rows:
            conn.execute(tables.allocations.insert(), rows)


def calls_of(test, module, name):
    """A list that fills with the arguments of every call of the function
    ``module.name`` for the rest of ``test`` (which it still makes)."""
    calls = []
    function = getattr(module, name)

    def counted(*args):
        calls.append(args)
        return function(*args)
    test.patch(module, name, counted)
    return calls


def get_candidates(app, version, pairs):
    query = urllib.parse.urlencode(pairs)
    req = webob.Request.blank(
        '/allocation_candidates?' + query,
        headers={'x-auth-token': 'admin',
                 'openstack-api-version': 'placement %d.%d' % version})
    resp = req.get_response(app)
    return resp.status_int, orjson.loads(resp.body)


def candidate_keys(body, version):
    """The body's candidates in the oracle's key form."""
    keys = set()
    for request in body['allocation_requests']:
        shown = props.allocations_of(request, version)
        amounts = frozenset((uuid, rc, n) for uuid, resources in shown.items()
                            for rc, n in resources.items())
        mappings = frozenset((suffix, frozenset(uuids)) for suffix, uuids
                             in request.get('mappings', {}).items())
        keys.add((amounts, mappings))
    return keys


def oracle_keys(expected, version):
    """The oracle's keys as the body shows them: no mappings before
    1.34."""
    if version >= (1, 34):
        return expected
    return {(amounts, frozenset()) for amounts, _ in expected}


def parsed_or_rejected(pairs, version):
    """The parsed request; one the parser refuses is no example (the
    strategies draw mostly valid ones, and 400s are tested elsewhere)."""
    try:
        ac_schema.check_query(pairs, version)
        return rg.parse_candidate_request(pairs, version)
    except Exception:
        hypothesis.reject()


def drawn_example(db, cloud, data, oracle=candidate_oracle.oracle,
                  **kinds):
    """Draw a request for ``cloud`` (``kinds``: request_pairs' member_of
    and traits), parse it, write the cloud to ``db``: (version, pairs,
    parsed request, the oracle's answer to it)."""
    version, pairs = data.draw(props.request_pairs(cloud, **kinds))
    request = parsed_or_rejected(pairs, version)
    expected = oracle(cloud, request)
    write_cloud(db, cloud)
    return version, pairs, request, expected


# Clouds and requests where required traits decide (see
# props.place_traits), member_of now and then too.
TRAITS_CLOUDS = props.clouds(roots_first=True, traits=True)
WITH_MEMBER_OF = st.sampled_from([False, False, True])


def capacity(cloud, uuid, rc):
    total, reserved, _, _, _, ratio = cloud.inventory[uuid][rc]
    return int((total - reserved) * ratio)


def read_in_windows(test, window, whole_read_share=float('inf')):
    """Make ``test``'s candidate requests read windows of ``window`` trees
    (a function of the candidates wanted, or a number), however small
    the cloud: no structure kept or read whole, unless the window is at
    least ``whole_read_share`` of the trees. (Nothing kept is read
    then.)"""
    if not callable(window):
        window = (lambda trees: lambda wanted: trees)(window)
    test.patch(policy, 'first_window', window)
    test.patch(policy, 'WHOLE_READ_SHARE', whole_read_share)
    test.patch(policy, 'WHOLE_READ_TREES', 0)
    test.patch(policy, 'KEEP_LARGE_CLOUDS', False)


class AppTestCase(testtools.TestCase):
    """The WSGI app on the test database, with its CandidateEngine
    (``candidate_engine``): each test's engine starts afresh."""

    def setUp(self):
        super().setUp()
        self.db = fixtures.database()
        conf = conf_mod.make_conf(fixtures._state['url'],
                                  sync_on_startup=False)
        self.candidate_engine = candidate_engine.CandidateEngine()
        self.app = app_mod.make_app(conf, db=self.db,
                                    candidates=self.candidate_engine)


class SnapshotCloud(candidate_oracle.Cloud):
    """A snapshot read by the SQL layer as the oracle's cloud, with the
    sharing providers' anchors as the SQL read them."""

    def __init__(self, snap):
        uuids = sorted(snap.providers)
        invs = {u: snap.inventories.get(u, {}) for u in uuids}
        super().__init__(
            {u: snap.parent(u) for u in uuids},
            {u: {rc: (inv.total, inv.reserved, inv.min_unit, inv.max_unit,
                      inv.step_size, inv.allocation_ratio)
                 for rc, inv in invs[u].items()} for u in uuids},
            {u: {rc: inv.used for rc, inv in invs[u].items()}
             for u in uuids},
            {u: set(snap.traits_of(u)) for u in uuids},
            {u: set(snap.aggregates_of(u)) for u in uuids})
        self.anchors = snap.anchors

    def sharing_anchors(self, uuid):
        return set(self.anchors.get(uuid, ()))


def list_providers(app, pairs):
    req = webob.Request.blank(
        '/resource_providers?' + urllib.parse.urlencode(pairs),
        headers={'x-auth-token': 'admin',
                 'openstack-api-version': 'placement 1.39'})
    resp = req.get_response(app)
    return resp.status_int, orjson.loads(resp.body)
