# SPDX-License-Identifier: Apache-2.0
"""Writers other than this server on its database: what upstream
Placement serving beside it during a rolling upgrade, or an operator's
SQL, would do.

Each write here is plain SQL shaped as upstream's code writes it (rows in
allocations, consumers, inventories, resource_providers and a provider
generation bumped, never a row of this server's derived tables); each
read goes through this server's API. The derived data (usage totals, the
structure stamp and the structure a worker keeps) must follow: the cases
are the ones found wrong before triggers kept them. Runs on whichever
database OSC_PLACEMENT_TEST_DB_URL names.
"""

import uuid as uuidlib

import sqlalchemy as sa

from osc_placement.server.db import tables
from tests.server import test_kept_structure as kept

call = kept.call
VCPU, DISK_GB = 0, 2


class OtherWriterTestCase(kept.CloudTestCase):

    def sql(self, statement, **params):
        with self.db.write() as conn:
            return conn.execute(sa.text(statement), params)

    def provider_id(self, name):
        with self.db.read() as conn:
            return conn.execute(sa.select(tables.resource_providers.c.id)
                                .where(tables.resource_providers.c.uuid
                                       == self.uuids[name])).scalar()

    def person(self, conn, table):
        external = str(uuidlib.uuid4())
        conn.execute(sa.text(
            'INSERT INTO %s (external_id, created_at) '
            'VALUES (:external, CURRENT_TIMESTAMP)' % table),
            {'external': external})
        return conn.execute(sa.text(
            'SELECT id FROM %s WHERE external_id = :external' % table),
            {'external': external}).scalar()

    def upstream_claim(self, name, class_id, used):
        """A consumer with one allocation and the provider's generation
        bumped, in one transaction, as upstream's allocation write."""
        consumer = str(uuidlib.uuid4())
        provider = self.provider_id(name)
        with self.db.write() as conn:
            project = self.person(conn, 'projects')
            user = self.person(conn, 'users')
            conn.execute(sa.text(
                'INSERT INTO consumers (uuid, project_id, user_id, '
                'generation, created_at) VALUES (:uuid, :project, :user, 1, '
                'CURRENT_TIMESTAMP)'),
                {'uuid': consumer, 'project': project, 'user': user})
            conn.execute(sa.text(
                'INSERT INTO allocations (resource_provider_id, consumer_id, '
                'resource_class_id, used, created_at) VALUES (:rp, :consumer, '
                ':rc, :used, CURRENT_TIMESTAMP)'),
                {'rp': provider, 'consumer': consumer, 'rc': class_id,
                 'used': used})
            conn.execute(sa.text(
                'UPDATE resource_providers SET generation = generation + 1 '
                'WHERE id = :rp'), {'rp': provider})
        return consumer

    def upstream_delete_consumer(self, consumer):
        with self.db.write() as conn:
            conn.execute(sa.text(
                'DELETE FROM allocations WHERE consumer_id = :c'),
                {'c': consumer})
            conn.execute(sa.text('DELETE FROM consumers WHERE uuid = :c'),
                         {'c': consumer})

    def usages(self, name):
        return self.ok(call(self.app, 'GET', '/resource_providers/%s/usages'
                            % self.uuids[name]))['usages']

    def our_claim(self, name, resources):
        return call(self.app, 'PUT', '/allocations/' + str(uuidlib.uuid4()), {
            'allocations': {self.uuids[name]: {'resources': resources}},
            'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
            'consumer_type': 'INSTANCE'})


class TestCapacity(OtherWriterTestCase):
    """The allocation writes' capacity checks count every writer's
    allocations."""

    def test_provider_filled_by_another_writer_refuses_more(self):
        self.upstream_claim('cn1', VCPU, 4)
        self.assertEqual({'VCPU': 4}, self.usages('cn1'))
        status, body = self.our_claim('cn1', {'VCPU': 4})
        self.assertEqual(409, status, body)

    def test_capacity_freed_by_another_writer_is_usable(self):
        consumer = self.claim('cn1', {'VCPU': 4})
        self.upstream_delete_consumer(consumer)
        self.assertEqual({'VCPU': 0}, self.usages('cn1'))
        status, body = self.our_claim('cn1', {'VCPU': 4})
        self.assertEqual(204, status, body)

    def test_allocation_changed_in_place(self):
        consumer = self.claim('cn1', {'VCPU': 1})
        self.sql('UPDATE allocations SET used = 3 WHERE consumer_id = :c',
                 c=consumer)
        self.assertEqual({'VCPU': 3}, self.usages('cn1'))
        self.assertEqual(409, self.our_claim('cn1', {'VCPU': 2})[0])
        self.assertEqual(204, self.our_claim('cn1', {'VCPU': 1})[0])


class TestCandidatesSeeOtherWriters(OtherWriterTestCase):
    """Each change by another writer shows in the next candidate answer,
    which equals a worker's that keeps nothing, and differs from the
    answer before (so each case can fail)."""

    def assert_seen(self, change):
        before = self.answer()
        change()
        after = self.answer()
        self.assertNotEqual(before, after)
        self.assertEqual(self.answer_keeping_nothing(), after)

    def test_allocation_added(self):
        self.assert_seen(lambda: self.upstream_claim('cn2', VCPU, 4))

    def test_inventory_added(self):
        def change():
            self.sql('INSERT INTO inventories (resource_provider_id, '
                     'resource_class_id, total, reserved, min_unit, '
                     'max_unit, step_size, allocation_ratio) VALUES '
                     '(:rp, :rc, 100, 0, 1, 100, 1, 1.0)',
                     rp=self.provider_id('cn3'), rc=DISK_GB)
        self.assert_seen(change)

    def test_total_shrunk(self):
        self.assert_seen(lambda: self.sql(
            'UPDATE inventories SET total = 5 WHERE resource_provider_id = '
            ':rp AND resource_class_id = :rc',
            rp=self.provider_id('cn2'), rc=DISK_GB))

    def test_child_provider_added(self):
        def change():
            parent = self.provider_id('cn3')
            with self.db.write() as conn:
                conn.execute(sa.text(
                    'INSERT INTO resource_providers (uuid, name, generation, '
                    'root_provider_id, parent_provider_id) VALUES '
                    "(:uuid, 'cn3-disk', 0, :root, :root)"),
                    {'uuid': str(uuidlib.uuid4()), 'root': parent})
                child = conn.execute(sa.text(
                    "SELECT id FROM resource_providers WHERE name = "
                    "'cn3-disk'")).scalar()
                conn.execute(sa.text(
                    'INSERT INTO inventories (resource_provider_id, '
                    'resource_class_id, total, reserved, min_unit, '
                    'max_unit, step_size, allocation_ratio) VALUES '
                    '(:rp, :rc, 100, 0, 1, 100, 1, 1.0)'),
                    {'rp': child, 'rc': DISK_GB})
        self.assert_seen(change)

    def test_provider_added(self):
        def change():
            with self.db.write() as conn:
                conn.execute(sa.text(
                    'INSERT INTO resource_providers (uuid, name, generation) '
                    "VALUES (:uuid, 'cn4', 0)"),
                    {'uuid': str(uuidlib.uuid4())})
                new = conn.execute(sa.text(
                    "SELECT id FROM resource_providers WHERE name = 'cn4'")
                ).scalar()
                conn.execute(sa.text(
                    'UPDATE resource_providers SET root_provider_id = :id '
                    'WHERE id = :id'), {'id': new})
                for rc in (VCPU, DISK_GB):
                    conn.execute(sa.text(
                        'INSERT INTO inventories (resource_provider_id, '
                        'resource_class_id, total, reserved, min_unit, '
                        'max_unit, step_size, allocation_ratio) VALUES '
                        '(:rp, :rc, 100, 0, 1, 100, 1, 1.0)'),
                        {'rp': new, 'rc': rc})
        self.assert_seen(change)


class TestDerivedRowsFollow(OtherWriterTestCase):

    def totals(self):
        with self.db.read() as conn:
            u = tables.usage_totals
            return dict(((rp, rc), used) for rp, rc, used in conn.execute(
                sa.select(u.c.resource_provider_id, u.c.resource_class_id,
                          u.c.used)).all() if used)

    def sums(self):
        a = tables.allocations
        with self.db.read() as conn:
            return dict(((rp, rc), used) for rp, rc, used in conn.execute(
                sa.select(a.c.resource_provider_id, a.c.resource_class_id,
                          sa.func.sum(a.c.used))
                .group_by(a.c.resource_provider_id, a.c.resource_class_id)
            ).all())

    def test_totals_equal_the_sums_after_mixed_writes(self):
        ours = self.claim('cn1', {'VCPU': 1})
        theirs = self.upstream_claim('cn2', VCPU, 2)
        self.upstream_claim('cn1', VCPU, 1)
        self.upstream_delete_consumer(ours)
        self.sql('UPDATE allocations SET resource_provider_id = :rp '
                 'WHERE consumer_id = :c', rp=self.provider_id('cn3'),
                 c=theirs)
        self.assertEqual(self.sums(), self.totals())
        self.assertEqual(2, len(self.totals()))

    def test_deleted_provider_leaves_no_totals(self):
        consumer = self.claim('cn3', {'VCPU': 1})
        self.upstream_delete_consumer(consumer)
        rp = self.provider_id('cn3')
        self.sql('DELETE FROM inventories WHERE resource_provider_id = :rp',
                 rp=rp)
        self.sql('UPDATE resource_providers SET root_provider_id = NULL '
                 'WHERE id = :rp', rp=rp)
        self.sql('DELETE FROM resource_providers WHERE id = :rp', rp=rp)
        with self.db.read() as conn:
            left = conn.execute(sa.select(sa.func.count()).where(
                tables.usage_totals.c.resource_provider_id == rp)).scalar()
        self.assertEqual(0, left)
