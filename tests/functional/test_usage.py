# SPDX-License-Identifier: Apache-2.0
"""``openstack resource provider usage show`` and ``resource usage show``."""

import uuid

from tests.functional import base


def by_class(rows):
    return {row['resource_class']: row['usage'] for row in rows}


class ProviderUsageTests:

    def test_provider_usage(self):
        rp = self.create_provider()['uuid']
        self.assertEqual([], self.openstack(
            'resource provider usage show ' + rp, use_json=True))
        self.openstack(['resource', 'provider', 'inventory', 'set', rp,
                        '--resource', 'VCPU=8',
                        '--resource', 'MEMORY_MB=4096'])
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0}, by_class(
            self.openstack('resource provider usage show ' + rp,
                           use_json=True)))
        self.allocate(str(uuid.uuid4()), {rp: {'VCPU': 2, 'MEMORY_MB': 512}})
        self.allocate(str(uuid.uuid4()), {rp: {'VCPU': 1}})
        rows = self.openstack('resource provider usage show ' + rp,
                              use_json=True)
        self.assertEqual(['resource_class', 'usage'], list(rows[0]))
        self.assertEqual({'VCPU': 3, 'MEMORY_MB': 512}, by_class(rows))
        value = self.openstack('resource provider usage show -f value '
                               '-c resource_class -c usage ' + rp)
        self.assertEqual(['MEMORY_MB 512', 'VCPU 3'],
                         sorted(value.strip().splitlines()))

    def test_unknown_provider(self):
        missing = str(uuid.uuid4())
        self.assertCommandFails(
            'resource provider usage show ' + missing,
            'No resource provider with uuid %s found: Resource provider %s '
            'not found (HTTP 404)' % (missing, missing))


class TestProviderUsage_1_0(ProviderUsageTests, base.FunctionalTestCase):
    VERSION = '1.0'

    def test_project_usage_needs_1_9(self):
        self.assertCommandFails('resource usage show %s' % uuid.uuid4(),
                                base.GATE % ('1.0', '1.9'))
        self.assertCommandFails('resource usage show %s' % uuid.uuid4(),
                                base.GATE % ('1.8', '1.9'), version='1.8')


class TestProviderUsage_1_39(ProviderUsageTests, base.FunctionalTestCase):
    VERSION = '1.39'


class ProjectUsageSetUp:

    def setUp(self):
        super().setUp()
        self.project, self.other_project = (str(uuid.uuid4()),
                                            str(uuid.uuid4()))
        self.user, self.other_user = str(uuid.uuid4()), str(uuid.uuid4())
        rp = self.create_provider()['uuid']
        self.openstack(['resource', 'provider', 'inventory', 'set', rp,
                        '--resource', 'VCPU=64',
                        '--resource', 'MEMORY_MB=65536',
                        '--resource', 'DISK_GB=1000'])
        self.allocate(str(uuid.uuid4()), {rp: {'VCPU': 2, 'MEMORY_MB': 2048}},
                      self.project, self.user, 'INSTANCE')
        self.allocate(str(uuid.uuid4()), {rp: {'VCPU': 4, 'MEMORY_MB': 1024}},
                      self.project, self.other_user, 'INSTANCE')
        self.allocate(str(uuid.uuid4()), {rp: {'DISK_GB': 100}},
                      self.project, self.user, 'VOLUME')
        self.allocate(str(uuid.uuid4()), {rp: {'VCPU': 1}},
                      self.project, self.user)
        self.allocate(str(uuid.uuid4()), {rp: {'VCPU': 8}},
                      self.other_project, self.user, 'INSTANCE')

    def usage(self, *args, **kwargs):
        return self.openstack(['resource', 'usage', 'show'] + list(args),
                              use_json=True, **kwargs)


class TestProjectUsage_1_9(ProjectUsageSetUp, base.FunctionalTestCase):
    VERSION = '1.9'

    def test_project_and_user_totals(self):
        rows = self.usage(self.project)
        self.assertEqual(['resource_class', 'usage'], list(rows[0]))
        self.assertEqual({'VCPU': 7, 'MEMORY_MB': 3072, 'DISK_GB': 100},
                         by_class(rows))
        self.assertEqual({'VCPU': 3, 'MEMORY_MB': 2048, 'DISK_GB': 100},
                         by_class(self.usage(self.project, '--user-id',
                                             self.user)))
        self.assertEqual({'VCPU': 8}, by_class(self.usage(self.other_project)))
        self.assertEqual([], self.usage(str(uuid.uuid4())))

    def test_consumer_type_needs_1_38(self):
        self.assertCommandFails(
            'resource usage show %s --consumer-type INSTANCE' % self.project,
            base.GATE % ('1.9', '1.38'))
        self.assertCommandFails(
            'resource usage show %s --consumer-type INSTANCE' % self.project,
            base.GATE % ('1.37', '1.38'), version='1.37')

    def test_missing_project_is_argparse_error(self):
        self.assertCommandFails(
            'resource usage show',
            'the following arguments are required: <project-uuid>', code=2)


class ConsumerTypeUsageTests(ProjectUsageSetUp):
    """From 1.38 the rows are per consumer type, with a consumer count."""

    COLUMNS = ['consumer_type', 'resource_class', 'usage', 'consumer_count']

    @staticmethod
    def by_type(rows):
        return {(row['consumer_type'], row['resource_class']):
                (row['usage'], row['consumer_count']) for row in rows}

    def test_grouped_by_consumer_type(self):
        rows = self.usage(self.project)
        self.assertEqual(self.COLUMNS, list(rows[0]))
        self.assertEqual({('INSTANCE', 'VCPU'): (6, 2),
                          ('INSTANCE', 'MEMORY_MB'): (3072, 2),
                          ('VOLUME', 'DISK_GB'): (100, 1),
                          ('unknown', 'VCPU'): (1, 1)}, self.by_type(rows))
        self.assertEqual({('INSTANCE', 'VCPU'): (2, 1),
                          ('INSTANCE', 'MEMORY_MB'): (2048, 1),
                          ('VOLUME', 'DISK_GB'): (100, 1),
                          ('unknown', 'VCPU'): (1, 1)},
                         self.by_type(self.usage(self.project, '--user-id',
                                                 self.user)))

    def test_consumer_type_filter(self):
        self.assertEqual({('INSTANCE', 'VCPU'): (6, 2),
                          ('INSTANCE', 'MEMORY_MB'): (3072, 2)},
                         self.by_type(self.usage(
                             self.project, '--consumer-type', 'INSTANCE')))
        self.assertEqual({('unknown', 'VCPU'): (1, 1)},
                         self.by_type(self.usage(
                             self.project, '--consumer-type', 'unknown')))
        self.assertEqual({('all', 'VCPU'): (7, 4),
                          ('all', 'MEMORY_MB'): (3072, 4),
                          ('all', 'DISK_GB'): (100, 4)},
                         self.by_type(self.usage(
                             self.project, '--consumer-type', 'all')))
        self.assertEqual([], self.usage(self.project, '--consumer-type',
                                        'MIGRATION'))

    def test_invalid_consumer_type(self):
        result = self.assertCommandFails(
            'resource usage show %s --consumer-type lower-case'
            % self.project, 'Invalid query string parameters')
        self.assertIn('(HTTP 400)', result.stderr)


class TestProjectUsage_1_38(ConsumerTypeUsageTests, base.FunctionalTestCase):
    VERSION = '1.38'


class TestProjectUsageNegotiated(ProjectUsageSetUp,
                                 base.FunctionalTestCase):
    """Negotiated, the command stays at 1.37 (upstream's two columns) unless
    --consumer-type asks for 1.38; an explicit version is honoured."""

    def test_negotiated_keeps_upstream_columns(self):
        calls = self.record_requests()
        rows = self.usage(self.project)
        self.assertEqual(['resource_class', 'usage'], list(rows[0]))
        self.assertEqual({'VCPU': 7, 'MEMORY_MB': 3072, 'DISK_GB': 100},
                         by_class(rows))
        self.assertEqual(
            [('GET', '/', 'placement 1.39'),
             ('GET', '/usages?project_id=' + self.project,
              'placement 1.37')], calls)

    def test_consumer_type_lifts_the_ceiling(self):
        calls = self.record_requests()
        rows = self.usage(self.project, '--consumer-type', 'INSTANCE')
        self.assertEqual(ConsumerTypeUsageTests.COLUMNS, list(rows[0]))
        self.assertEqual({('INSTANCE', 'VCPU'): (6, 2),
                          ('INSTANCE', 'MEMORY_MB'): (3072, 2)},
                         ConsumerTypeUsageTests.by_type(rows))
        self.assertEqual('placement 1.39', calls[-1][2])


class TestProjectUsage_1_39(ConsumerTypeUsageTests, base.FunctionalTestCase):
    VERSION = '1.39'
